/**
 * One contender of the transcript benchmark in a fresh process, so its peak memory is its own:
 * opens a session and builds its context, then prints `{ ms, maxRssMiB, heapUsedMiB }` as JSON
 * (heap after a full GC, with everything still referenced).
 *
 * Usage: node --expose-gc --import tsx --conditions=@keel/source transcript-memory.ts <keel-import|keel-store|pi|floor> <file> [store dir]
 */
import { readFileSync } from "node:fs";
import { SessionManager } from "@mariozechner/pi-coding-agent";
import { createFsStore } from "@keel/store-fs";
import { importPiSession, openTranscript } from "@keel/transcript";

const [contender, file, storeDir] = process.argv.slice(2);
if (!contender || !file) throw new Error("usage: transcript-memory.ts <contender> <file> [store dir]");
const started = performance.now();
let kept: unknown;
if (contender === "floor") {
  kept = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as unknown);
} else if (contender === "keel-import") {
  const session = importPiSession(readFileSync(file, "utf8"))._unsafeUnwrap();
  kept = [session, session.buildContext()._unsafeUnwrap()];
} else if (contender === "keel-store") {
  const transcript = (await openTranscript({ store: createFsStore({ dir: storeDir as string }), sessionId: "bench", create: false }))._unsafeUnwrap();
  kept = [transcript, transcript.buildContext()._unsafeUnwrap()];
} else {
  const manager = SessionManager.open(file);
  kept = [manager, manager.buildSessionContext()];
}
const ms = performance.now() - started;
(globalThis as { gc?: () => void }).gc?.();
const heapUsedMiB = process.memoryUsage().heapUsed / 2 ** 20;
const maxRssMiB = process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify({ contender, ms: Math.round(ms), maxRssMiB: Math.round(maxRssMiB), heapUsedMiB: Math.round(heapUsedMiB), kept: Array.isArray(kept) }));
