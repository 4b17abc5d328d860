import type { AgentInputItem, Session } from "@openai/agents";
import { KeelError, isJsonValue, newId, toKeelError, validateOrThrow, type JsonValue } from "@keel/core";
import type { KeelStore } from "@keel/store";
import type { ResultAsync } from "neverthrow";
import { z } from "zod";
import { ItemSchema, foldSessionEvents, type LiveItem, type SessionEvent } from "./internal/session-events.js";
import { KeelSessionOptionsSchema, type KeelSessionOptions } from "./session-options.js";

/** The items of `addItems`: each a plain JSON object (no undefined, function, BigInt, cycle, class instance). */
const AddedItemsSchema = z.array(ItemSchema.refine(isJsonValue, "an item must be plain JSON (an AgentInputItem): no undefined, function, symbol, BigInt, NaN, cycle or class instance"));

/** The `limit` of `getItems`: any number, read as the SDK's `MemorySession` reads it (see {@link KeelSession.getItems}). */
const LimitSchema = z.custom<number | undefined>((value) => value === undefined || typeof value === "number", "limit must be a number, or omitted for every item");

async function unwrap<T>(result: ResultAsync<T, KeelError>): Promise<T> {
  const settled = await result;
  if (settled.isErr()) throw settled.error;
  return settled.value;
}

/**
 * An OpenAI Agents JS `Session` kept as a Keel log. `addItems` appends (the store serialises
 * appends, so concurrent writers in several processes never lose an item); `popItem` appends a
 * removal of the item that was last, conditioned on the log not having moved (`expectedSeq`), and
 * retries on `conflict`, so two concurrent pops never return the same item; `clearSession`
 * deletes the log (the store keeps its last seq, so seqs are never reused and a pop decided
 * before the clear fails and retries), so a cleared session's history is not kept. Errors are
 * thrown as {@link KeelError} (the Session API is Promise-based).
 */
export class KeelSession implements Session {
  readonly #store: KeelStore;
  readonly #sessionId: string;
  readonly #log: string[];
  readonly #maxPopAttempts: number;

  /** Use {@link createKeelSession}. */
  constructor(options: KeelSessionOptions) {
    // Read once: the store is the caller's object (z.custom passes it through).
    const parsed = validateOrThrow(KeelSessionOptionsSchema, options, "createKeelSession options") as KeelSessionOptions;
    this.#store = parsed.store;
    this.#sessionId = parsed.sessionId;
    this.#log = [...(parsed.prefix ?? ["openai-agents", "sessions"]), parsed.sessionId];
    this.#maxPopAttempts = parsed.maxPopAttempts ?? 50;
  }

  /** The session id given at creation. Has no side effect (nothing is created until items are added). */
  async getSessionId(): Promise<string> {
    return this.#sessionId;
  }

  /**
   * The most recent `limit` items (all when omitted), oldest first. Any number is read as the
   * SDK's `MemorySession` reads it, so the two stay interchangeable: zero or less (a negative
   * limit, -Infinity) gives none, a fractional one rounds up, NaN and Infinity give all. A limit
   * that is not a number is `invalid_input`.
   */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    validateOrThrow(LimitSchema, limit, "getItems limit");
    const { items } = await this.#state();
    // MemorySession's own arithmetic: slice() truncates the fractional start, NaN reads as 0.
    const chosen = limit === undefined ? items : limit <= 0 ? [] : items.slice(Math.max(items.length - limit, 0));
    return chosen.map((live) => structuredClone(live.item) as unknown as AgentInputItem);
  }

  /**
   * Appends items, in order, as one record. The items are copied first (as `MemorySession`
   * copies them, with `structuredClone`), so each field is read once and what is checked is what
   * is stored; an item that cannot be copied (a getter that throws, a function) or is not plain
   * JSON is `invalid_input`, and nothing is written.
   */
  async addItems(items: AgentInputItem[]): Promise<void> {
    let copied: unknown;
    try {
      copied = structuredClone(items);
    } catch (error) {
      throw toKeelError(error, "invalid_input", "addItems: the items cannot be copied (a getter that throws, a function, a symbol or a proxy in them)");
    }
    const values = validateOrThrow(AddedItemsSchema, copied, "addItems items");
    if (values.length === 0) return;
    await this.#append({ type: "add", items: values });
  }

  /** Removes and returns the last item (undefined when empty); exact under concurrency. */
  async popItem(): Promise<AgentInputItem | undefined> {
    for (let attempt = 0; attempt < this.#maxPopAttempts; attempt += 1) {
      const { items, lastSeq } = await this.#state();
      const last = items.at(-1);
      if (!last) return undefined;
      const event: SessionEvent = { type: "pop", seq: last.seq, index: last.index };
      const appended = await this.#store.logs.append(this.#log, [{ id: newId(), value: event }], { expectedSeq: lastSeq });
      if (appended.isOk()) return structuredClone(last.item) as unknown as AgentInputItem;
      // `deleted`: a concurrent clear deleted the log after this pop read it; decide again.
      if (appended.error.code !== "conflict" && appended.error.code !== "deleted") throw appended.error;
    }
    throw new KeelError("conflict", `popItem: session "${this.#sessionId}" kept changing during ${this.#maxPopAttempts} attempts; retry`, {
      details: { sessionId: this.#sessionId },
      retryable: true,
    });
  }

  /** Removes every item, and the history of the session with them (the log is deleted). */
  async clearSession(): Promise<void> {
    await unwrap(this.#store.logs.delete(this.#log));
  }

  async #append(event: SessionEvent): Promise<void> {
    await unwrap(this.#store.logs.append(this.#log, [{ id: newId(), value: event as unknown as JsonValue }]));
  }

  async #state(): Promise<{ items: LiveItem[]; lastSeq: number }> {
    const records = await unwrap(this.#store.logs.read(this.#log));
    return { items: foldSessionEvents(records, this.#log.join("/")), lastSeq: records.at(-1)?.seq ?? 0 };
  }
}

/**
 * Creates an OpenAI Agents JS session over any Keel store; pass it to `run(agent, input, { session })`.
 * Throws `invalid_input` on bad options (a `sessionId` that is not a SafeName, a missing store).
 *
 * @example
 * ```ts
 * const session = createKeelSession({ store: createFsStore({ dir: ".keel" }), sessionId: "user-42" });
 * const result = await run(agent, "Hello", { session });
 * ```
 */
export function createKeelSession(options: KeelSessionOptions): KeelSession {
  return new KeelSession(options);
}
