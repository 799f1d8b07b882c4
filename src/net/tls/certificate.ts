/**
 * A certificate and its private key as the TLS listener takes them (PEM), checked before use:
 * the chain parses, the key belongs to the leaf, and when it expires. Used for files the
 * operator manages (`tls.cert`, `tls.key`) and for certificates obtained through ACME.
 */
import { createPrivateKey, X509Certificate } from "node:crypto";
import { GatehouseError } from "../../core/errors.ts";

export interface CertifiedKey {
  /** The chain, leaf first (PEM). */
  cert: string;
  /** The leaf's private key (PEM). */
  key: string;
  /** When the leaf expires (epoch ms). */
  notAfter: number;
  /** When the leaf became valid (epoch ms). */
  notBefore: number;
  /** The leaf's DNS names and IP addresses (subjectAltName). */
  names: string[];
}

export type CertificateErrorCode =
  | "unreadable"
  | "invalid_certificate"
  | "invalid_key"
  | "key_mismatch";

export class CertificateError extends GatehouseError<CertificateErrorCode> {}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/;

/**
 * Checks a PEM chain and key; `where` names them in errors (file names, or "the stored
 * certificate"). Throws a CertificateError saying what is wrong and what to do.
 */
export function checkCertifiedKey(
  cert: string,
  key: string,
  where: { cert: string; key: string },
): CertifiedKey {
  const leafPem = PEM_CERTIFICATE.exec(cert)?.[0];
  let leaf: X509Certificate;
  try {
    if (!leafPem) throw new Error("no PEM certificate in it");
    leaf = new X509Certificate(leafPem);
  } catch (error) {
    throw new CertificateError(
      "invalid_certificate",
      `${where.cert} is not a PEM certificate chain (${
        (error as Error).message
      }); give the full chain, leaf first`,
    );
  }
  let privateKey;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    throw new CertificateError(
      "invalid_key",
      `${where.key} is not a PEM private key (${(error as Error).message})`,
    );
  }
  if (privateKey.type !== "private") {
    throw new CertificateError("invalid_key", `${where.key} holds a public key, not a private one`);
  }
  if (!leaf.checkPrivateKey(privateKey)) {
    throw new CertificateError(
      "key_mismatch",
      `${where.key} is not the private key of the certificate in ${where.cert}; give the key the certificate was issued for`,
    );
  }
  return {
    cert,
    key,
    notAfter: leaf.validToDate.getTime(),
    notBefore: leaf.validFromDate.getTime(),
    names: (leaf.subjectAltName ?? "").split(",").map((name) =>
      name.trim().replace(/^(DNS|IP Address):/, "")
    ).filter((name) => name !== ""),
  };
}

/** Reads and checks `tls.cert` and `tls.key`. */
export async function readCertificateFiles(
  files: { certFile: string; keyFile: string },
): Promise<CertifiedKey> {
  const read = async (path: string, what: string) => {
    try {
      return await Deno.readTextFile(path);
    } catch (error) {
      throw new CertificateError(
        "unreadable",
        `cannot read ${what} ${path}: ${
          (error as Error).message
        }; check the path and that the gateway's user may read it`,
      );
    }
  };
  const [cert, key] = await Promise.all([
    read(files.certFile, "tls.cert"),
    read(files.keyFile, "tls.key"),
  ]);
  return checkCertifiedKey(cert, key, { cert: files.certFile, key: files.keyFile });
}

/**
 * What `gatehouse check` looks at beyond the configuration's text: the certificate files and
 * their key, or the ACME caRoots file. Throws a CertificateError naming the file.
 */
export async function checkTlsFiles(tls: {
  files?: { certFile: string; keyFile: string };
  acme?: { caRootsFile?: string };
}): Promise<void> {
  if (tls.files) await readCertificateFiles(tls.files);
  const caRoots = tls.acme?.caRootsFile;
  if (!caRoots) return;
  let text: string;
  try {
    text = await Deno.readTextFile(caRoots);
  } catch (error) {
    throw new CertificateError(
      "unreadable",
      `cannot read tls.acme.caRoots ${caRoots}: ${(error as Error).message}`,
    );
  }
  if (!PEM_CERTIFICATE.test(text)) {
    throw new CertificateError(
      "invalid_certificate",
      `tls.acme.caRoots ${caRoots} holds no PEM certificate`,
    );
  }
}
