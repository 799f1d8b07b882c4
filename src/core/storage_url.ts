/**
 * What kind of storage a `storage:` string names, and how it may be shown: a PostgreSQL URL
 * carries a password, which never reaches a log line, `check`'s output or an error message.
 */

/** postgres:// or postgresql://, as libpq takes them. */
export function isPostgresUrl(storage: string): boolean {
  return /^postgres(ql)?:\/\//i.test(storage);
}

/**
 * `storage` fit to print: a PostgreSQL URL with its password (and any password= parameter)
 * replaced by ***; anything else as it is. A URL that does not parse is shown as its scheme
 * only, since where its password ends cannot be known.
 */
export function showStorage(storage: string): string {
  if (!isPostgresUrl(storage)) return storage;
  let url: URL;
  try {
    url = new URL(storage);
  } catch {
    return `${storage.slice(0, storage.indexOf("://") + 3)}…`;
  }
  if (url.password) url.password = "***";
  for (const name of [...url.searchParams.keys()]) {
    if (/^(password|pass)$/i.test(name)) url.searchParams.set(name, "***");
  }
  return url.toString();
}

/**
 * What the console's overview says the storage is: the engine for a PostgreSQL URL (whatever
 * the case of its scheme, as libpq and the client take it), else where the KV file is.
 */
export function storageSummary(storage: string): string {
  return isPostgresUrl(storage) ? "PostgreSQL" : storage;
}
