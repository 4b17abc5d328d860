#!/usr/bin/env node
// A stand-in coding-agent CLI for the example: `line-agent [--resume <id>] <prompt>` prints one
// JSON event per line. Sessions live in $LINE_AGENT_STATE; $LINE_AGENT_SCENARIO makes it fail.
import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const argv = process.argv.slice(2);
if (argv[0] === "--version") {
  console.log("line-agent 1.2.3");
  process.exit(0);
}
const state = process.env.LINE_AGENT_STATE ?? "/tmp";
const resume = argv[0] === "--resume" ? argv[1] : null;
const prompt = argv.at(-1);
if (resume && !existsSync(join(state, resume))) {
  console.error(`error: unknown session ${resume}`);
  process.exit(2);
}
const id = resume ?? randomUUID();
mkdirSync(state, { recursive: true });
writeFileSync(join(state, id), prompt);
const say = (event) => console.log(JSON.stringify(event));
say({ type: "start", session: id });
switch (process.env.LINE_AGENT_SCENARIO ?? "success") {
  case "in_band_error":
    say({ type: "failed", message: "model refused the request" });
    break;
  case "transient_error":
    say({ type: "failed", message: "provider said 529 overloaded" });
    process.exitCode = 1;
    break;
  case "garbage":
    console.log("Segmentation fault (core dumped)");
    break;
  case "hang":
    setInterval(() => {}, 1000);
    break;
  default:
    say({ type: "tool", name: "read", path: "README.md", bytes: 42 });
    say({ type: "note", text: "unknown events are ignored" });
    say({ type: "say", text: `You said: ${prompt}` });
    say({ type: "done", usage: { in: 120, cached: 20, out: 8 } });
}
