/**
 * A real PgBouncer in transaction pooling mode in front of the test server, for the tests that
 * show the store keeps no session state. Started on a free 127.0.0.1 port with its own config in
 * a temp directory; `undefined` (with the reason) when the `pgbouncer` binary is not installed.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { testPostgresUrl } from "./postgres-test-database.js";

const BINARIES = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer"];

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** A running PgBouncer: its connection string and how to stop it. */
export interface Bouncer {
  url: string;
  stop(): Promise<void>;
}

/** Starts PgBouncer (`pool_mode = transaction`) in front of the test server, or says why it cannot. */
export async function startTransactionPooler(): Promise<Bouncer | string> {
  const binary = BINARIES.find((candidate) => existsSync(candidate));
  if (!binary) return "pgbouncer is not installed";
  const upstream = new URL(testPostgresUrl);
  const database = upstream.pathname.slice(1) || "postgres";
  const user = decodeURIComponent(upstream.username || "postgres");
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "keel-pgbouncer-"));
  // Writable by the unprivileged user PgBouncer drops to (its pid file and socket go here).
  chmodSync(dir, 0o777);
  writeFileSync(path.join(dir, "users.txt"), `"${user}" ""\n`);
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `${database} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${database} user=${user}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "auth_type = trust",
      `auth_file = ${path.join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "default_pool_size = 4",
      "max_client_conn = 100",
      `unix_socket_dir = ${dir}`,
      `pidfile = ${path.join(dir, "pgbouncer.pid")}`,
      "",
    ].join("\n"),
  );
  // PgBouncer refuses to run as root; -u drops to an unprivileged user.
  const args = process.getuid?.() === 0 ? ["-u", "nobody", path.join(dir, "pgbouncer.ini")] : [path.join(dir, "pgbouncer.ini")];
  const child: ChildProcess = spawn(binary, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  for (let tries = 0; tries < 100; tries++) {
    if (child.exitCode !== null) return `pgbouncer exited: ${stderr}`;
    const listening = await new Promise<boolean>((resolve) => {
      const socket = createServer();
      socket.once("error", () => resolve(true));
      socket.listen(port, "127.0.0.1", () => socket.close(() => resolve(false)));
    });
    if (listening) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    url: `postgres://${encodeURIComponent(user)}@127.0.0.1:${port}/${database}`,
    stop: async () => {
      child.kill("SIGTERM");
      await new Promise((resolve) => (child.exitCode !== null ? resolve(undefined) : child.once("exit", resolve)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
