// Engine of the fake coding-agent CLIs used by the adapter tests. Each adapter's fake
// (`src/<adapter>/__fixtures__/fake-<adapter>.mjs`) describes its CLI — how it reads its
// arguments, its recorded output, how it fails — and calls `runFakeCli(profile)`.
//
// Environment:
//   KEEL_FAKE_STATE     directory for sessions, the invocation log and spawned pids (required for resume)
//   KEEL_FAKE_SCENARIO  success | unknown_events | in_band_error | transient_error | garbage | crash | hang  (default success)
//   KEEL_FAKE_SAMPLE    print this file verbatim instead (a recorded sample), exit KEEL_FAKE_EXIT (default 0)
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** Environment variables worth recording for the tests (what adapters set). */
const RECORDED_ENV = /^(KEEL_|OPENCODE_|GEMINI_|GROK_|PI_|CODEX_|DEEPSEEK_|COPILOT_|IS_SANDBOX$|NPM_CONFIG_OFFLINE$)/;

function sessionFile(state, id) {
  return join(state, "sessions", encodeURIComponent(id));
}

function finish(stdoutLines, stderr, exitCode) {
  process.exitCode = exitCode;
  if (stderr) process.stderr.write(stderr.endsWith("\n") ? stderr : `${stderr}\n`);
  if (stdoutLines.length > 0) process.stdout.write(`${stdoutLines.join("\n")}\n`);
}

function recordedLines(profile, resumed, id) {
  const file = resumed && profile.resumeFixture ? profile.resumeFixture : profile.fixture;
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => line.split(profile.recordedId).join(id));
}

function hang(state, lines) {
  // A grandchild that shares stdout, as a CLI's tool subprocess would: the runner must kill the
  // whole group and must not wait forever for the pipe to close.
  const grandchild = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: ["ignore", "inherit", "inherit"] });
  if (state) appendFileSync(join(state, "pids.jsonl"), `${JSON.stringify([process.pid, grandchild.pid])}\n`);
  process.stdout.write(`${lines.join("\n")}\n`);
  setInterval(() => {}, 1000);
}

export function runFakeCli(profile) {
  const argv = process.argv.slice(2);
  if (argv.includes("--version")) {
    finish([profile.version], "", 0);
    return;
  }
  const state = process.env.KEEL_FAKE_STATE;
  const scenario = process.env.KEEL_FAKE_SCENARIO ?? "success";
  const parsed = profile.parseArgs(argv);
  if (state) {
    mkdirSync(join(state, "sessions"), { recursive: true });
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => RECORDED_ENV.test(key)));
    appendFileSync(join(state, "invocations.jsonl"), `${JSON.stringify({ argv, cwd: process.cwd(), env, scenario, parsed })}\n`);
  }
  if (process.env.KEEL_FAKE_SAMPLE) {
    process.exitCode = Number(process.env.KEEL_FAKE_EXIT ?? "0");
    process.stdout.write(readFileSync(process.env.KEEL_FAKE_SAMPLE));
    return;
  }
  if (parsed.resumeId && !(state && existsSync(sessionFile(state, parsed.resumeId)))) {
    const failure = profile.badResume(parsed.resumeId);
    finish(failure.stdout ?? [], failure.stderr ?? "", failure.exitCode);
    return;
  }
  const id = parsed.resumeId ?? parsed.assignedId ?? (profile.newId ? profile.newId() : randomUUID());
  if (state) writeFileSync(sessionFile(state, id), JSON.stringify({ id, cwd: process.cwd() }));
  const lines = recordedLines(profile, Boolean(parsed.resumeId), id);
  switch (scenario) {
    case "success":
      finish(lines, "", 0);
      return;
    case "unknown_events":
      finish([lines[0], ...profile.unknownEvents(id), ...lines.slice(1)], "", 0);
      return;
    case "in_band_error": {
      const failure = profile.inBandError(id);
      finish(failure.stdout, failure.stderr ?? "", 0);
      return;
    }
    case "transient_error": {
      // What a CLI does when the provider answers 529 and it gives up: its own words, a failure exit.
      const failure = profile.transientError?.(id) ?? {
        stdout: lines.slice(0, 1),
        stderr: 'API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
        exitCode: 1,
      };
      finish(failure.stdout ?? [], failure.stderr ?? "", failure.exitCode ?? 0);
      return;
    }
    case "garbage":
      finish(["<html><body>502 Bad Gateway</body></html>", lines[0].slice(0, Math.floor(lines[0].length / 2))], "", 0);
      return;
    case "crash":
      finish(lines.slice(0, 1), "fatal: the fake CLI crashed on purpose", 3);
      return;
    case "hang":
      hang(state, lines.slice(0, profile.hangAfterLines ?? 1));
      return;
    default:
      finish([], `unknown KEEL_FAKE_SCENARIO ${scenario}`, 64);
  }
}

/** The value after `flag` in argv (`--flag value` or `--flag=value`), or null. */
export function flagValue(argv, ...flags) {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index];
    for (const flag of flags) {
      if (arg === flag && index + 1 < argv.length) return argv[index + 1];
      if (arg.startsWith(`${flag}=`)) return arg.slice(flag.length + 1);
    }
  }
  return null;
}
