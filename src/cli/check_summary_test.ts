import assert from "node:assert/strict";
import { parseConfigText } from "../config/load.ts";
import { connectionLines } from "./check_summary.ts";

const config = (extra: string) =>
  parseConfigText(
    `baseUrl: https://gw.example.com
servers:
  alpha: { transport: stdio, command: deno, public: true }
${extra}`,
    () => undefined,
  );

Deno.test("connectionLines() states the caps serve derives: the main port's and the redirect listener's", () => {
  const tls = `tls: { cert: /etc/gw/cert.pem, key: /etc/gw/key.pem, redirectHttp: ":80" }\n`;
  assert.deepEqual(connectionLines(config(tls), 1_024), [
    "  connections: at most 106 on the main port (derived from the open-file limit 1024), 64 on tls.redirectHttp",
  ]);
  assert.deepEqual(connectionLines(config(""), 1_024), [
    "  connections: at most 170 on the main port (derived from the open-file limit 1024)",
  ]);
  assert.deepEqual(connectionLines(config(""), undefined), [
    "  connections: at most 1000 on the main port (the open-file limit is unknown here: a default)",
  ]);
  const [line, warning] = connectionLines(config(`connections: { max: 5000 }\n${tls}`), 1_024);
  assert.equal(
    line,
    "  connections: at most 5000 on the main port (connections.max), 64 on tls.redirectHttp",
  );
  assert.match(warning, /may hold 15704 file descriptors .* more than the open-file limit 1024/);
});
