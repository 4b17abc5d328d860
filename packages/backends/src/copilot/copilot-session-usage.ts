import { readFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { addUsage, emptyUsage, type Usage } from "@keel/core";
import { asRecord, asString, childRecord, createUsageFieldReader, readUsageFields, withoutPart, type Loose } from "../kit/index.js";

/** The usage events of a Copilot session-state `events.jsonl`, in the order Copilot prefers them. */
const USAGE_EVENTS = ["session.usage_record", "assistant.usage"];

function usageOf(data: Loose): Usage | null {
  const tokens = childRecord(data, "usage") ?? data;
  const fields = createUsageFieldReader("copilot");
  const pick = (...keys: string[]) => {
    for (const key of keys) if (tokens[key] !== undefined && tokens[key] !== null) return fields.count(tokens, key);
    return fields.count({}, keys[0]!);
  };
  const read = readUsageFields({
    input: pick("inputTokens", "input_tokens", "promptTokens", "prompt_tokens"),
    cacheRead: pick("cacheReadTokens", "cache_read_tokens", "cachedInputTokens", "cached_tokens"),
    cacheWrite: pick("cacheWriteTokens", "cache_write_tokens", "cacheCreationTokens"),
    output: pick("outputTokens", "output_tokens", "completionTokens", "completion_tokens"),
    reasoning: pick("reasoningTokens", "reasoning_tokens"),
  });
  if (read.isErr()) return null;
  const { input, cacheRead, cacheWrite, output, reasoning } = read.value;
  if ([input, cacheRead, cacheWrite, output, reasoning].every((value) => value === null)) return null;
  // OpenAI-style counts, as Copilot's own telemetry reports them: the cache is inside the input
  // and reasoning inside the output.
  return {
    inputUncached: withoutPart(withoutPart(input, cacheRead), cacheWrite),
    cacheRead,
    cacheWrite,
    output: withoutPart(output, reasoning),
    reasoning,
    costUsd: null,
  };
}

/**
 * The usage of the last turn of a Copilot session from its session-state `events.jsonl`
 * (Copilot 1.0.102 prints no token counts on stdout): the usage records after the last
 * `user.message` (this turn's prompt), summed — `session.usage_record` events when there are any,
 * otherwise the `usage` of `assistant.message` events. `null` when the log shows none. Pure;
 * lines that are not JSON objects are skipped (the file is being appended to).
 */
export function copilotTurnUsage(eventsJsonl: string): Usage | null {
  const events = eventsJsonl
    .split("\n")
    .map((line) => {
      try {
        return asRecord(JSON.parse(line));
      } catch {
        return undefined;
      }
    })
    .filter((event): event is Loose => event !== undefined);
  let start = 0;
  events.forEach((event, index) => {
    if (event.type === "user.message") start = index + 1;
  });
  const turn = events.slice(start);
  const records = turn.filter((event) => USAGE_EVENTS.includes(asString(event.type) ?? ""));
  const sources = records.length > 0 ? records : turn.filter((event) => event.type === "assistant.message");
  let sum: Usage | null = null;
  for (const event of sources) {
    const usage = usageOf(childRecord(event, "data") ?? {});
    if (usage) sum = addUsage(sum ?? emptyUsage(), usage);
  }
  return sum;
}

/** Where Copilot keeps a session's event log: `$COPILOT_HOME/session-state/<id>/events.jsonl` (default `~/.copilot`). */
export function copilotEventsPath(env: Readonly<Record<string, string>>, sessionId: string): string {
  const home = env.COPILOT_HOME ?? join(env.HOME ?? homedir(), ".copilot");
  return join(home, "session-state", sessionId, "events.jsonl");
}

/** Reads the session log and returns the last turn's usage, or `null` when it cannot be read or shows none. */
export async function readCopilotSessionUsage(env: Readonly<Record<string, string>>, sessionId: string): Promise<Usage | null> {
  const text = await readFile(copilotEventsPath(env, sessionId), "utf8").catch(() => null);
  return text === null ? null : copilotTurnUsage(text);
}
