/**
 * The access policy: who among the people the identity provider authenticates may use the
 * gateway. Rules admit by verified email address, by email domain, (GitHub) by organisation, or
 * by a group the provider named at sign-in (compared exactly); any one matching admits. Returns
 * the reason for a refusal, or undefined.
 */
import type { AccessPolicy } from "../config/types.ts";
import type { Identity } from "../core/identity.ts";

/** The addresses the provider vouches for; an address it calls unverified counts for nothing. */
function verifiedAddresses(identity: Identity): string[] {
  if (identity.verifiedEmails) return identity.verifiedEmails.map((e) => e.toLowerCase());
  if (!identity.email || identity.emailVerified === false) return [];
  return [identity.email.toLowerCase()];
}

export function checkAccess(identity: Identity, policy: AccessPolicy): string | undefined {
  if (policy.anyone) return undefined;
  const addresses = verifiedAddresses(identity);
  if (addresses.some((address) => policy.emails.includes(address))) return undefined;
  const domains = addresses.map((address) => address.slice(address.lastIndexOf("@") + 1));
  if (domains.some((domain) => policy.domains.includes(domain))) return undefined;
  if ((identity.orgs ?? []).some((org) => policy.orgs.includes(org.toLowerCase()))) {
    return undefined;
  }
  if ((identity.groups ?? []).some((group) => policy.groups.includes(group))) return undefined;
  const who = identity.email ?? identity.subject;
  if (identity.email && identity.emailVerified === false) {
    return `the identity provider has not verified the address ${who}, so it cannot be admitted`;
  }
  return `${who} is not permitted by this gateway's access policy; ask its administrators for access`;
}
