import path from "node:path";
import { CliUsageError, type CliCommand } from "../cli-command.js";
import { paint } from "../cli-io.js";
import { renderDoctorReport } from "../internal/doctor-report.js";
import { runDoctor } from "../internal/doctor-run.js";
import { printable } from "../internal/inspect-text.js";

const HELP = `keel doctor — check that Keel can run here

Usage: keel doctor [--dir <dir>] [--json]

Options:
  --dir <dir>   the store directory to check (default .keel); nothing is created
  --json        print one JSON document instead of the text
  -h, --help

Checks the Node.js version (Keel needs >=20.19), whether the store directory exists, holds a
Keel store and is writable (or, when it does not exist yet, whether its nearest existing parent
is), and which coding-agent CLIs are installed: their version (\`<cli> --version\`) and whether
Keel can resume their threads. DeepSeek counts as available when DEEPSEEK_API_KEY is set. Lists
the optional peers of @keel/cli (the SQL stores, MCP, OpenTelemetry, the agent SDKs of keel demo)
by what needs them: installed or not, and the npm install line.

Exit codes: 0 ready (also when no CLI is installed: that is information), 1 Node.js is too old
or the directory is not writable, 2 bad arguments.

Example:
  keel doctor --dir .keel
`;

/** `keel doctor [--dir .keel] [--json]`: Node version, store directory, installed backends and optional peers. */
export const doctorCommand: CliCommand = {
  name: "doctor",
  summary: "check Node.js, the store directory and which agent CLIs are installed and resume",
  help: HELP,
  options: { dir: { type: "string" }, json: { type: "boolean" } },
  allowPositionals: false,
  run: async (args, io) => {
    const dirOption = args.values["dir"] ?? ".keel";
    if (typeof dirOption !== "string" || dirOption === "") throw new CliUsageError("--dir needs a directory");
    const checked = await runDoctor({ nodeVersion: process.versions.node, dir: path.resolve(io.cwd, dirOption), env: io.env, peers: { cwd: io.cwd } });
    if (checked.isErr()) {
      io.stderr(`${paint(io, "red", "error")} (${checked.error.code}): ${printable(checked.error.message)}\n`);
      return 1;
    }
    const report = checked.value;
    io.stdout(args.values["json"] === true ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorReport(report, io));
    return report.ok ? 0 : 1;
  },
};
