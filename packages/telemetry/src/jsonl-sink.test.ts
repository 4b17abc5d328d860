import { spawn } from "node:child_process";
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { KeelError, createEventBus, type EventInput, type KeelEvent } from "@keel/core";
import { createJsonlEventSink, readEventsJsonl } from "@keel/telemetry";
import { demoEvents } from "../../../test/support/telemetry-demo-events.js";

const directory = mkdtempSync(join(tmpdir(), "keel-telemetry-sink-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
let fileCount = 0;
const newFile = () => join(directory, `events-${++fileCount}.jsonl`);

const repoRoot = resolve(fileURLToPath(new URL(".", import.meta.url)), "../../..");
const childScript = resolve(repoRoot, "test/support/telemetry-jsonl-writer-child.ts");

function runChild(args: string[], options: { killAfterOutput?: boolean } = {}): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ["--import", "tsx", "--conditions=@keel/source", childScript, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      if (options.killAfterOutput && chunk.toString().includes("written")) child.kill("SIGKILL");
    });
    child.on("error", fail);
    child.on("exit", (code, signal) => done({ code, signal, stderr }));
  });
}

describe("createJsonlEventSink", () => {
  it("appends one JSON line per event that readEventsJsonl reads back", async () => {
    const file = newFile();
    const sink = createJsonlEventSink({ file });
    const bus = createEventBus();
    sink.attach(bus);
    const events = demoEvents({ rounds: 2 });
    for (const event of events) bus.emit(event as EventInput<"agent.io.read"> & { type: "agent.io.read" });
    expect((await sink.flush()).isOk()).toBe(true);
    expect((await sink.close()).isOk()).toBe(true);
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(events.length + 1);
    expect((await readEventsJsonl(file))._unsafeUnwrap()).toEqual({ events, torn: null });
    expect(sink.file).toBe(file);
  });

  it("writes no raw content unless the host opts in", async () => {
    const file = newFile();
    const custom = { type: "host.turn.prompt", at: 3, prompt: "please read SECRET.md", text: "answer" };
    const sink = createJsonlEventSink({ file });
    await sink.append(custom);
    await sink.close();
    const text = readFileSync(file, "utf8");
    expect(text).not.toContain("SECRET");
    expect(text).not.toContain("answer");
    expect(JSON.parse(text)).toMatchObject({ prompt: { redacted: true, bytes: 21 }, text: { redacted: true, bytes: 6 } });
    const rawFile = newFile();
    const raw = createJsonlEventSink({ file: rawFile, includeContent: true });
    await raw.append(custom);
    await raw.close();
    expect(JSON.parse(readFileSync(rawFile, "utf8"))).toEqual(custom);
  });

  it("cuts a torn last line before appending, so new events never land on it", async () => {
    const file = newFile();
    const [first, second] = demoEvents({ rounds: 1 });
    writeFileSync(file, `${JSON.stringify(first)}\n`);
    appendFileSync(file, '{"type":"agent.io.re');
    const sink = createJsonlEventSink({ file });
    expect((await sink.append(second as KeelEvent)).isOk()).toBe(true);
    expect(sink.repairedBytes).toBe(20);
    await sink.close();
    expect((await readEventsJsonl(file))._unsafeUnwrap()).toEqual({ events: [first, second], torn: null });
  });

  it("keeps every line whole when two processes append at once", async () => {
    const file = newFile();
    const results = await Promise.all([runChild([file, "alpha", "1500"]), runChild([file, "beta", "1500"])]);
    for (const result of results) expect(result).toMatchObject({ code: 0, stderr: "" });
    const { events, torn } = (await readEventsJsonl(file))._unsafeUnwrap();
    expect(torn).toBeNull();
    expect(events).toHaveLength(3_000);
    for (const writer of ["alpha", "beta"]) {
      const own = events.filter((event) => event.type === "agent.io.read" && event.role === writer);
      expect(own.map((event) => (event.type === "agent.io.read" ? event.bytes : -1))).toEqual(Array.from({ length: 1_500 }, (_, index) => index));
    }
  });

  it("keeps every written event when the writing process is killed", async () => {
    const file = newFile();
    const result = await runChild([file, "killed", "500", "hang"], { killAfterOutput: true });
    expect(result.signal).toBe("SIGKILL");
    const { events, torn } = (await readEventsJsonl(file))._unsafeUnwrap();
    expect(torn).toBeNull();
    expect(events).toHaveLength(500);
  });

  it("reports I/O failures as io_failed, to the caller or at the next flush", async () => {
    const file = join(directory, "missing-directory", "events.jsonl");
    const sink = createJsonlEventSink({ file });
    expect((await sink.append({ type: "x", at: 1 }))._unsafeUnwrapErr().code).toBe("io_failed");
    const bus = createEventBus();
    sink.attach(bus);
    bus.emit({ type: "backend.turn.failed", backend: "pi", code: "timeout", resumeFailed: false });
    expect((await sink.flush())._unsafeUnwrapErr().code).toBe("io_failed");
    expect((await sink.flush()).isOk()).toBe(true);
  });

  it("refuses bad events, oversized lines and appends after close", async () => {
    const file = newFile();
    const sink = createJsonlEventSink({ file, maxEventBytes: 200, includeContent: true });
    expect((await sink.append({ type: "x", at: Number.POSITIVE_INFINITY }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect((await sink.append({ type: "x", at: 1, prompt: "y".repeat(300) }))._unsafeUnwrapErr().code).toBe("too_large");
    expect((await sink.close()).isOk()).toBe(true);
    expect((await sink.close()).isOk()).toBe(true);
    expect((await sink.append({ type: "x", at: 1 }))._unsafeUnwrapErr().code).toBe("invalid_input");
    expect(existsSync(file)).toBe(false);
  });

  it("throws invalid_input at once for bad options", () => {
    for (const options of [{}, { file: "" }, { file: "a", maxEventBytes: 1 }, { file: "a", other: true }]) {
      let caught: unknown;
      try {
        createJsonlEventSink(options as never);
      } catch (error) {
        caught = error;
      }
      expect(KeelError.is(caught, "invalid_input")).toBe(true);
    }
  });
});
