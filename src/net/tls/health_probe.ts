/**
 * `gatehouse health` for a gateway that serves https itself: GET /health over TLS to the listen
 * address. The certificate is for baseUrl's host, not for the address probed, so it is not
 * verified here: the probe asks whether this machine's gateway answers, on loopback, not whom
 * to trust. Bounded by `timeoutMs`.
 */
import tls from "node:tls";

/** The status /health answered with; throws when nothing answered in time. */
export function probeHealthTls(
  host: string,
  port: number,
  serverName: string,
  timeoutMs = 5_000,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host,
      port,
      servername: serverName,
      rejectUnauthorized: false,
      ALPNProtocols: ["http/1.1"],
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    let head = "";
    socket.on("secureConnect", () => {
      socket.write(`GET /health HTTP/1.1\r\nhost: ${serverName}\r\nconnection: close\r\n\r\n`);
    });
    socket.on("data", (chunk: Uint8Array) => {
      head += new TextDecoder().decode(chunk);
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head);
      if (!status) return;
      clearTimeout(timer);
      socket.destroy();
      resolve(Number(status[1]));
    });
    socket.on("error", (error: Error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
