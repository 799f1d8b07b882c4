/**
 * The schema of `tls:` (HTTPS in the binary: certificate files or ACME) Mirrors tls.ts.
 */
import { duration, type JsonSchema, text } from "./schema_builders.ts";
import { LETS_ENCRYPT_DIRECTORY } from "./tls.ts";

export const TLS_SCHEMA: JsonSchema = {
  type: "object",
  additionalProperties: false,
  description:
    "HTTPS served by Gatehouse itself (TLS 1.2 and 1.3, ALPN http/1.1), terminated in the front so that its timeouts and connection cap cover handshakes (a handshake must finish within connections.headerTimeout). Give cert and key, or acme. Left out: plain HTTP (behind a proxy, or on localhost).",
  properties: {
    cert: text(
      "The certificate chain, a PEM file (leaf first). Read again on SIGHUP and when the file changes; open connections keep theirs.",
      { examples: ["/etc/gatehouse/tls/fullchain.pem"] },
    ),
    key: text(
      "The certificate's private key, a PEM file. `gatehouse check` refuses a key that does not match the certificate.",
      { examples: ["/etc/gatehouse/tls/privkey.pem"] },
    ),
    acme: {
      type: "object",
      additionalProperties: false,
      description:
        "Obtain and renew a certificate for baseUrl's host from an ACME certificate authority (RFC 8555) through HTTP-01 on tls.redirectHttp. The account key and certificate are kept in storage (encrypted with a key derived from the master secret), so replicas share them and a restart reuses them. TLS-ALPN-01 is not offered: Deno cannot choose a certificate by ALPN during a handshake.",
      properties: {
        directory: text(
          "The ACME directory URL: Let's Encrypt's production one, its staging one, or a company CA's.",
          {
            default: LETS_ENCRYPT_DIRECTORY,
            examples: ["https://acme-staging-v02.api.letsencrypt.org/directory"],
          },
        ),
        email: text("Contact address for the ACME account (expiry notices).", {
          examples: ["ops@example.com"],
        }),
        caRoots: text(
          "A PEM file of CA certificates to trust when talking to the ACME directory (a company CA, a test server), instead of the system's.",
          { examples: ["/etc/gatehouse/acme-ca.pem"] },
        ),
        renewBefore: duration(
          "Renew when the certificate has less than this left; failures are retried with back-off.",
          "30d",
        ),
      },
    },
    redirectHttp: text(
      "A plain-HTTP listener that answers every request with 308 to https (same host and path) and serves ACME HTTP-01 challenges. Required with acme.",
      {
        pattern: "^(\\[[0-9a-fA-F:]+\\]|[A-Za-z0-9.-]+)?:\\d{1,5}$",
        examples: [":80", "10.0.0.5:80"],
      },
    ),
  },
};
