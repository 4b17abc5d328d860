import { existsSync } from "node:fs";
import { mkdir, readFile, readdir, rename, rm, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { KeelError, createEventBus, totalInputTokens, type KeelEvent, type RoleSessionTurnEvent } from "@keel/core";
import type { Backend } from "@keel/backend";
import { createScriptedBackend, type ScriptedThread } from "@keel/backends/scripted";
import { createKeel } from "@keel/runtime";
import type { KeelStore } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { createFsStore } from "@keel/store-fs";
import { analyzeEvents, createJsonlEventSink, readEventsJsonl, renderReport, type EventAnalysis } from "@keel/telemetry";
import { ResultAsync, type Result } from "neverthrow";
import {
  DEMO_OBJECTIVE,
  DEMO_REPOSITORY,
  DEMO_ROLES,
  demoChangeOf,
  demoPlanOf,
  demoRespond,
  demoStep,
  demoTask,
} from "./demo-mission.js";

/** The policies the demo compares. */
export type DemoPolicy = "fresh" | "mission" | "rolling";

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** The demo directory (absolute). */
  dir: string;
  /** The policies to replay the mission under, in order. */
  policies: readonly DemoPolicy[];
  /** Rounds per policy. */
  rounds: number;
  /** Continue the missions of an earlier demo in `dir` instead of starting anew. */
  continueMissions: boolean;
  /**
   * The backend: the scripted provider, a real CLI backend, or one opened once the demo
   * directory and its repository are ready (a real CLI against the fake provider), closed at the end.
   */
  backend: Backend | "scripted" | DemoBackendOpener;
  /** Called with one line per turn. */
  progress: (line: string) => void;
  /** Called every `heartbeatMs` while a round runs, with how long it has run (default `progress`). */
  heartbeat?: (line: string) => void;
  /** The heartbeat's period (default 10 000 ms). */
  heartbeatMs?: number;
  /** Colour in the comparison table. */
  color: boolean;
  /**
   * The store to run in instead of the filesystem store in `<dir>/store` (`keel demo --store
   * <url>`), with the label printed for it. Without `continueMissions` it must hold no demo yet.
   */
  store?: { open: () => KeelStore; label: string };
}

/**
 * Opens the demo's backend in the prepared demo directory (its repository is `workspace`), with the
 * demo's store (where a backend that keeps its threads itself, the AI SDK's, keeps them).
 */
export type DemoBackendOpener = (paths: { dir: string; workspace: string; store: KeelStore }) => Promise<{ backend: Backend; close(): Promise<void> }>;

/** What a demo run produced. */
export interface DemoOutcome {
  /** The comparison table (text). */
  table: string;
  /** The analysis of every event in `events.jsonl`. */
  analysis: EventAnalysis;
  /** Where things were written. */
  files: { store: string; workspace: string; events: string; report: string };
  /** Turns run by this invocation. */
  turns: number;
}

/** The marker file that says a directory is a demo directory (and may be wiped by the next demo). */
export const DEMO_MARKER = ".keel-demo";
const PROVIDER_FILE = "scripted-provider.json";

/** The mission id of the demo under one policy. */
export const demoMissionId = (policy: DemoPolicy) => `demo-${policy}`;

/**
 * Replays the demo mission (planner, engineer and reviewer over several rounds) under each
 * policy on the filesystem store in `<dir>/store`, writes every event to `<dir>/events.jsonl`
 * and the HTML report to `<dir>/report.html`, and returns the comparison.
 */
export function runDemo(options: DemoOptions): ResultAsync<DemoOutcome, KeelError> {
  const files = {
    store: options.store?.label ?? join(options.dir, "store"),
    workspace: join(options.dir, "workspace"),
    events: join(options.dir, "events.jsonl"),
    report: join(options.dir, "report.html"),
  };
  return ResultAsync.fromThrowable(
    async () => {
      await prepareDirectory(options.dir, options.continueMissions, files.workspace);
      const threads = options.backend === "scripted" ? await loadThreads(join(options.dir, PROVIDER_FILE)) : new Map<string, ScriptedThread>();
      const store = options.store ? options.store.open() : createFsStore({ dir: files.store });
      let opened: Awaited<ReturnType<DemoBackendOpener>> | undefined;
      try {
        opened = typeof options.backend === "function" ? await options.backend({ dir: options.dir, workspace: files.workspace, store }) : undefined;
      } catch (error) {
        await store.close();
        throw error;
      }
      const events = createEventBus();
      const sink = createJsonlEventSink({ file: files.events });
      const detach = sink.attach(events);
      let turns = 0;
      const roundOf = new Map<string, number>();
      // The heartbeat: while a turn runs (a real CLI takes seconds to minutes), a line every
      // heartbeatMs says which round is running and for how long.
      let running: { label: string; since: number; done: number } | undefined;
      const heartbeat = options.heartbeat ?? options.progress;
      const beat = setInterval(() => {
        if (running) heartbeat(`${running.label}  ${(DEMO_ROLES[running.done] ?? "").padEnd(8)}  turn running for ${Math.round((Date.now() - running.since) / 1000)} s`);
      }, options.heartbeatMs ?? 10_000);
      beat.unref?.();
      events.on("role.session.turn", (event) => {
        turns++;
        if (running) {
          running.since = Date.now();
          running.done++;
        }
        options.progress(progressLine(event, roundOf.get(event.missionId) ?? 0));
      });
      try {
        if (options.store && !options.continueMissions && (await unwrap(store.docs.list(["demo"], { limit: 1 }))).items.length > 0) {
          throw new KeelError("conflict", `the store ${options.store.label} already holds a demo: pass --continue to go on with it, or use an empty store`, { details: {} });
        }
        for (const policy of options.policies) {
          const missionId = demoMissionId(policy);
          const backend =
            options.backend === "scripted"
              ? createScriptedBackend({ resumable: true, script: demoRespond, threads, promptCache: true })
              : (opened?.backend ?? (options.backend as Backend));
          const keel = createKeel({ store, backends: [backend], policy, events, cwd: files.workspace, turnTimeoutMs: 600_000 });
          try {
            await unwrap(keel.sessions.initMissionCheckpoint(missionId));
            const progress = await unwrap(store.docs.get(["demo", missionId]));
            const first = ((progress?.value as { lastRound?: number } | undefined)?.lastRound ?? 0) + 1;
            for (let round = first; round < first + options.rounds; round++) {
              roundOf.set(missionId, round);
              running = { label: `[${policy.padEnd(7)}]  round ${String(round).padStart(2)}`, since: Date.now(), done: 0 };
              await unwrap(
                keel.runRound({
                  missionId,
                  round,
                  objective: DEMO_OBJECTIVE,
                  objectiveRevision: 1,
                  branch: "main",
                  planner: { prompt: demoTask("planner", round, "") },
                  engineer: { prompt: (context) => demoTask("engineer", round, demoPlanOf(context.planner?.text ?? "")) },
                  reviewer: { prompt: (context) => demoTask("reviewer", round, demoChangeOf(context.engineer?.text ?? "")) },
                }),
              );
              await unwrap(updateDoc<{ lastRound: number }>(store.docs, ["demo", missionId], () => ({ lastRound: round })));
            }
            const last = first + options.rounds - 1;
            for (const role of DEMO_ROLES) {
              await unwrap(
                keel.sessions.writeHandoff(missionId, role, {
                  done: [`rounds ${first} to ${last}`],
                  inFlight: [],
                  nextSteps: [`round ${last + 1}: ${demoStep(last + 1).title}`],
                  warnings: [],
                }),
              );
            }
          } finally {
            await keel.close();
          }
        }
      } finally {
        clearInterval(beat);
        running = undefined;
        await opened?.close();
        detach();
        await store.close();
        await unwrap(sink.close());
        if (options.backend === "scripted") await saveThreads(join(options.dir, PROVIDER_FILE), threads);
      }
      const recorded = await unwrap(readEventsJsonl(files.events));
      const analysis = take(analyzeEvents(recorded.events as KeelEvent[]));
      const table = take(renderReport(analysis, { format: "text", color: options.color }));
      const html = take(renderReport(analysis, { format: "html", title: "Keel demo: role-session policies" }));
      await writeFile(files.report, html);
      return { table, analysis, files, turns };
    },
    (error) => (KeelError.is(error) ? error : new KeelError("io_failed", `the demo failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error })),
  )();
}

async function unwrap<T>(result: ResultAsync<T, KeelError>): Promise<T> {
  return take(await result);
}

function take<T>(result: Result<T, KeelError>): T {
  if (result.isErr()) throw result.error;
  return result.value;
}

async function prepareDirectory(dir: string, continueMissions: boolean, workspace: string): Promise<void> {
  const marker = join(dir, DEMO_MARKER);
  if (continueMissions) {
    if (!existsSync(marker)) {
      throw new KeelError("invalid_input", `${dir} holds no earlier demo to continue; run \`keel demo --dir ${dir}\` first`, { details: { dir } });
    }
    return;
  }
  if (existsSync(dir)) {
    const entries = await readdir(dir);
    if (entries.length > 0 && !entries.includes(DEMO_MARKER)) {
      throw new KeelError("invalid_input", `${dir} is not empty and is not a demo directory; choose another --dir`, { details: { dir } });
    }
    await rm(dir, { recursive: true, force: true });
  }
  await mkdir(dir, { recursive: true });
  await writeFile(marker, "This directory was made by `keel demo`; the next `keel demo` here replaces it.\n");
  for (const [path, text] of Object.entries(DEMO_REPOSITORY)) {
    const full = join(workspace, path);
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  }
}

/** The scripted provider's own thread store, kept on disk as a real CLI keeps its sessions. */
async function loadThreads(file: string): Promise<Map<string, ScriptedThread>> {
  if (!existsSync(file)) return new Map();
  const parsed = JSON.parse(await readFile(file, "utf8")) as { threads?: ScriptedThread[] };
  return new Map((parsed.threads ?? []).map((thread) => [thread.id, { id: thread.id, exchanges: [...thread.exchanges] }]));
}

async function saveThreads(file: string, threads: Map<string, ScriptedThread>): Promise<void> {
  const temporary = `${file}.tmp`;
  await writeFile(temporary, `${JSON.stringify({ threads: [...threads.values()] })}\n`);
  await rename(temporary, file);
}

function progressLine(event: RoleSessionTurnEvent, round: number): string {
  const input = totalInputTokens(event.usage);
  const reason = event.action === "resumed" ? "" : ` (${event.rotationReason})`;
  return [
    `[${event.policy.padEnd(7)}]`,
    `round ${String(round).padStart(2)}`,
    event.role.padEnd(8),
    `${event.action}${reason}`.padEnd(26),
    `prompt ${String(event.promptBytes).padStart(5)} B`,
    `input ${input === null ? "    ?" : String(input).padStart(6)} tok`,
    `thread ${event.threadId ?? "-"}`,
  ].join("  ");
}
