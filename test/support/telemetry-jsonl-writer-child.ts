/**
 * A child process for the JSONL sink tests: appends `count` events to `file` through
 * `createJsonlEventSink`, tagged with `writer`, then closes the sink. With `hang`, it stops
 * after the events without closing and waits to be killed.
 *
 * Usage: node --import tsx --conditions=@keel/source test/support/telemetry-jsonl-writer-child.ts <file> <writer> <count> [hang]
 */
import { createEventBus } from "@keel/core";
import { createJsonlEventSink } from "@keel/telemetry";

const [file = "", writer = "w", countText = "0", hang] = process.argv.slice(2);
const sink = createJsonlEventSink({ file });
const bus = createEventBus();
sink.attach(bus);
for (let index = 0; index < Number(countText); index++) {
  bus.emit({
    type: "agent.io.read",
    role: writer,
    missionId: "concurrent",
    path: `${writer}/${index}/${"p".repeat(index % 97)}`,
    bytes: index,
    skill: null,
  });
}
if (hang === "hang") {
  process.stdout.write("written\n");
  setInterval(() => undefined, 1_000);
} else {
  const closed = await sink.close();
  if (closed.isErr()) {
    process.stderr.write(`${closed.error.code}: ${closed.error.message}\n`);
    process.exit(1);
  }
}
