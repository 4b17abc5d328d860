/**
 * Multi-process worker for the atomic swap of a managed skill (test/skills-swap-multiprocess.test.ts).
 *
 * Usage: skills-swap-worker.ts writer <layer> <role> <work dir> <count> <grace ms>
 *          after "go" on stdin, imports <count> versions of the skill `swap-probe` over each other
 *          (`overwrite: true`), then prints `result {"replaced":N}`.
 *        skills-swap-worker.ts reader <layer> <role>
 *          prints `ready`, then until "stop" on stdin polls as fast as it can: `resolve` (a warm
 *          library, and a new one every tenth round), the role directory's listing, SKILL.md read
 *          through the skill's path, and `readBody`; then prints `result {...}` with the counts
 *          of rounds, absent and partial reads, and the versions seen.
 *
 * Every version's SKILL.md names its number in the description and ends with a line naming it
 * again after ~16 KiB of body: a read that sees two numbers, or no end line, is partial.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSkillLibrary, importSkill, type SkillLibrary } from "@keel/skills";

const NAME = "swap-probe";
const [mode, layer, role, work, count, grace] = process.argv.slice(2);
if (!mode || !layer || !role) throw new Error("usage: skills-swap-worker.ts writer|reader <layer> <role> …");

function skillText(version: number): string {
  const body = Array.from({ length: 300 }, (_, line) => `line ${line} of version ${version}: follow the probe procedure.`).join("\n");
  return `---\nname: ${NAME}\ndescription: Probe skill, version ${version}. Use when probing swaps.\n---\n${body}\nend of version ${version}\n`;
}

/** The version a SKILL.md text is complete for, or `undefined` when it is partial or mixed. */
function completeVersion(text: string): number | undefined {
  const head = /description: Probe skill, version (\d+)\./.exec(text);
  const tail = /end of version (\d+)\n$/.exec(text);
  if (!head || !tail || head[1] !== tail[1]) return undefined;
  return Number(head[1]);
}

const waitForLine = (expected: string) =>
  new Promise<void>((resolve) => {
    let buffered = "";
    const onData = (chunk: Buffer) => {
      buffered += chunk.toString("utf8");
      if (buffered.split("\n").includes(expected)) {
        process.stdin.off("data", onData);
        // One line is all a worker reads: let go of stdin so that the process can exit.
        process.stdin.destroy();
        resolve();
      }
    };
    process.stdin.on("data", onData);
  });

async function writer(): Promise<void> {
  const total = Number(count);
  process.stdout.write("loaded\n");
  await waitForLine("go");
  let replaced = 0;
  // Paced so that the run outlasts the grace twice over, however fast the machine: the early
  // versions then pass their grace while the writer is still replacing, and are removed on the way.
  const pause = (2 * Number(grace)) / total;
  for (let version = 1; version <= total; version++) {
    await new Promise((resolve) => setTimeout(resolve, pause));
    const from = join(work!, `source-${version}`, NAME);
    mkdirSync(join(from, "scripts"), { recursive: true });
    writeFileSync(join(from, "SKILL.md"), skillText(version));
    writeFileSync(join(from, "scripts", "probe.py"), `print(${version})\n`);
    const result = await importSkill({ from, layer: layer!, role: role!, routing: "unclassified", overwrite: true, versionGraceMs: Number(grace), lockWaitMs: 20_000 });
    if (result.isErr()) throw result.error;
    if (result.value.replaced) replaced++;
    rmSync(join(work!, `source-${version}`), { recursive: true, force: true });
  }
  process.stdout.write(`result ${JSON.stringify({ replaced })}\n`);
}

async function reader(): Promise<void> {
  const counts = { rounds: 0, absentInView: 0, absentInListing: 0, absentFile: 0, partialFile: 0, absentBody: 0, partialBody: 0, errors: [] as string[] };
  const seen = new Set<number>();
  let stopped = false;
  void waitForLine("stop").then(() => (stopped = true));
  const layers = [{ name: "project", dir: layer! }];
  const warm = createSkillLibrary({ layers });
  const fail = (what: string, error: unknown) => counts.errors.length < 10 && counts.errors.push(`${what}: ${String(error)}`);
  process.stdout.write("ready\n");
  while (!stopped) {
    counts.rounds++;
    const library: SkillLibrary = counts.rounds % 10 === 0 ? createSkillLibrary({ layers }) : warm;
    const view = await library.resolve(role!);
    if (view.isErr()) throw view.error;
    const skill = view.value.skills.find((entry) => entry.name === NAME);
    if (!skill) counts.absentInView++;
    if (!readdirSync(join(layer!, role!)).includes(NAME)) counts.absentInListing++;
    try {
      const version = completeVersion(readFileSync(join(layer!, role!, NAME, "SKILL.md"), "utf8"));
      if (version === undefined) counts.partialFile++;
      else seen.add(version);
    } catch (error) {
      counts.absentFile++;
      fail("read", error);
    }
    if (skill) {
      const body = await library.readBody(skill, { role: role! });
      if (body.isErr()) {
        counts.absentBody++;
        fail("readBody", body.error);
      } else if (!/end of version \d+\n$/.test(body.value.text)) {
        counts.partialBody++;
      }
    }
    // Let the stdin listener run now and then.
    if (counts.rounds % 20 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  process.stdout.write(`result ${JSON.stringify({ ...counts, versions: [...seen].sort((left, right) => left - right) })}\n`);
}

await (mode === "writer" ? writer() : reader());
