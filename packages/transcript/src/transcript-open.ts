import { type Clock, type EventBus, type JsonValue, KeelError, newId, systemClock, validate } from "@keel/core";
import type { Doc, KeelStore, LogRecord } from "@keel/store";
import { DEFAULT_MAX_VALUE_BYTES, encodeValue } from "@keel/store/kit";
import { err, ok, type Result, ResultAsync } from "neverthrow";
import { type CompactTranscriptOptions, compactTranscript } from "./compaction-compact.js";
import type { TranscriptContext } from "./context-build.js";
import { parseEntry, readEntry } from "./entry-parse.js";
import { type CompactionEntry, EntryIdSchema, isKnownEntryType, type TranscriptEntry, type TranscriptEntryInput } from "./entry-schema.js";
import {
  entriesKey,
  headKey,
  TRANSCRIPT_FORMAT_VERSION,
  type TranscriptHead,
  TranscriptHeadSchema,
  type TranscriptParent,
} from "./transcript-head.js";
import { type NavigateOptions, type NavigationResult, navigateTranscript } from "./transcript-navigate.js";
import { type ForkOptions, ForkOptionsSchema, isoNow, LeafArgumentSchema, type OpenTranscriptOptions, OpenTranscriptOptionsSchema } from "./transcript-options.js";
import { createMutableTree, indexForest, type MutableTranscriptTree, type TranscriptTree } from "./transcript-tree.js";

/**
 * A session tree kept in a store. Reads answer from memory; every write is durable when its
 * result resolves (an acknowledged entry survives a crash on a `fsync` store). Writes of one
 * transcript are serialized; a second writer on the same session makes the next write
 * `conflict` (reopen to continue), never an interleaved tree.
 */
export interface Transcript {
  /** The session id. */
  readonly sessionId: string;
  /** Where this session was forked from, if it was. */
  readonly parent: TranscriptParent | undefined;
  /** The store it lives in. */
  readonly store: KeelStore;
  /** The clock of entry timestamps. */
  readonly clock: Clock;
  /** The event bus given at open, if any. */
  readonly events: EventBus | undefined;
  /** The active leaf (`null` before the first entry, or after `setLeaf(null)`). */
  leafId(): string | null;
  /** The tree, read-only (live: it grows as entries are appended). */
  tree(): TranscriptTree;
  /**
   * Appends an entry as a child of the leaf and moves the leaf to it. Never throws: an entry that
   * fails its schema (a `timestamp` that is not an ISO 8601 time, an id with a control character,
   * a `__proto__` field), a clock or id maker that throws is `invalid_input`; nothing is written.
   */
  append(input: TranscriptEntryInput): ResultAsync<TranscriptEntry, KeelError>;
  /** Moves the leaf (durably, without appending); `null` makes the next entry a new root. `invalid_input` for an argument that is not an entry id or `null`. */
  setLeaf(id: string | null): ResultAsync<void, KeelError>;
  /** Starts a branch at an existing entry: the next append becomes its child. `invalid_input` for an argument that is not an entry id. */
  branch(fromId: string): ResultAsync<void, KeelError>;
  /** The entries from the root to `leafId` (default the leaf); `invalid_input` for an argument that is not an entry id or `null`. */
  path(leafId?: string | null): Result<TranscriptEntry[], KeelError>;
  /** The direct children of an entry (`null`: the roots). */
  children(id: string | null): Result<readonly TranscriptEntry[], KeelError>;
  /** The label of an entry. */
  label(id: string): string | undefined;
  /** Sets (or with `undefined`, clears) the label of an entry by appending a `label` entry. */
  setLabel(targetId: string, label: string | undefined): ResultAsync<TranscriptEntry, KeelError>;
  /** The model's context at `leafId` (default the leaf). Linear in the path length. */
  buildContext(leafId?: string | null): Result<TranscriptContext, KeelError>;
  /**
   * Copies the path to `fromId` into a new session that records this one as its parent. The
   * options are strict: `null`, an unknown option or a field of the wrong type is `invalid_input`,
   * and nothing is written to either store.
   */
  fork(options: ForkOptions): ResultAsync<Transcript, KeelError>;
  /** Moves the leaf to `targetId`, with a summary of the branch left when `summarize` is given (hooks may cancel it or supply the summary); strict options, `invalid_input` when bad. */
  navigate(targetId: string, options?: NavigateOptions): ResultAsync<NavigationResult, KeelError>;
  /** Plans, summarizes and appends a compaction at the leaf; `null` when there is nothing to summarize (hooks may cancel it or supply the summary); strict options, `invalid_input` when bad. */
  compact(options: CompactTranscriptOptions): ResultAsync<CompactionEntry | null, KeelError>;
}

function corruptRecord(sessionId: string, record: LogRecord, message: string): KeelError {
  return new KeelError("corrupt", `transcript "${sessionId}" record ${record.seq}: ${message}`, {
    details: { location: `${entriesKey(sessionId).join("/")}#${record.seq}`, seq: record.seq, recordId: record.id },
  });
}

/** Reads and checks the entries of a log: each a valid entry stored under its own id, the whole a forest. */
function loadEntries(sessionId: string, records: readonly LogRecord[]): Result<{ entries: TranscriptEntry[]; byId: Map<string, TranscriptEntry> }, KeelError> {
  const entries: TranscriptEntry[] = new Array(records.length);
  for (let index = 0; index < records.length; index++) {
    const record = records[index] as LogRecord;
    const parsed = readEntry(record.value, `entry ${record.id}`);
    if (parsed.isErr()) return err(corruptRecord(sessionId, record, parsed.error.message));
    if (parsed.value.id !== record.id) return err(corruptRecord(sessionId, record, `the entry's id "${parsed.value.id}" differs from the record id`));
    entries[index] = parsed.value;
  }
  return indexForest(entries).map((byId) => ({ entries, byId }));
}

function newHead(sessionId: string, createdAt: string, parent: TranscriptParent | undefined): TranscriptHead {
  const head: TranscriptHead = {
    format: "keel.transcript",
    formatVersion: TRANSCRIPT_FORMAT_VERSION,
    sessionId,
    leafId: null,
    atSeq: 0,
    createdAt,
  };
  if (parent) head.parent = parent;
  return head;
}

async function readOrCreateHead(options: Required<Pick<OpenTranscriptOptions, "store" | "sessionId">> & OpenTranscriptOptions, clock: Clock): Promise<Result<Doc, KeelError>> {
  const { store, sessionId } = options;
  for (let attempt = 0; attempt < 3; attempt++) {
    const found = await store.docs.get(headKey(sessionId));
    if (found.isErr()) return err(found.error);
    if (found.value) return ok(found.value);
    if (options.create === false) {
      return err(new KeelError("not_found", `transcript "${sessionId}" does not exist: open it with create: true to start it`, { details: { sessionId } }));
    }
    const createdAt = isoNow(clock);
    if (createdAt.isErr()) return err(createdAt.error);
    const created = await store.docs.put(headKey(sessionId), newHead(sessionId, createdAt.value, options.parent) as unknown as JsonValue, { create: true });
    if (created.isOk()) return ok(created.value);
    if (created.error.code !== "conflict") return err(created.error);
  }
  return err(new KeelError("conflict", `transcript "${sessionId}" head kept changing while opening: retry`, { details: { sessionId } }));
}

function checkHead(sessionId: string, doc: Doc): Result<TranscriptHead, KeelError> {
  const version = (doc.value as { formatVersion?: unknown } | null)?.formatVersion;
  if (typeof version === "number" && version > TRANSCRIPT_FORMAT_VERSION) {
    return err(
      new KeelError("unsupported", `transcript "${sessionId}" has format version ${version}; this version reads up to ${TRANSCRIPT_FORMAT_VERSION}: upgrade @keel/transcript`, {
        details: { sessionId, formatVersion: version },
      }),
    );
  }
  return validate(TranscriptHeadSchema, doc.value, `transcript "${sessionId}" head`).mapErr(
    (error) => new KeelError("corrupt", error.message, { details: { location: headKey(sessionId).join("/"), ...error.details } }),
  );
}

/**
 * Opens (by default creating) a session's transcript on any store (strict options: an unknown
 * option or one of the wrong type is `invalid_input`, and nothing is created): reads its entries (a log)
 * and its head (a document), checks them (`corrupt` for a bad record, a duplicate id, a missing
 * parent, a cycle, a leaf that does not exist; `unsupported` for a newer format) and answers a
 * {@link Transcript}. The first entry is written at once when appended: nothing is deferred.
 *
 * @example
 * ```ts
 * const transcript = (await openTranscript({ store: createMemoryStore(), sessionId: "s1" }))._unsafeUnwrap();
 * await transcript.append({ type: "message", message: { role: "user", content: "hello", timestamp: Date.now() } });
 * const context = transcript.buildContext()._unsafeUnwrap(); // context.messages[0].role === "user"
 * ```
 */
export function openTranscript(options: OpenTranscriptOptions): ResultAsync<Transcript, KeelError> {
  const checked = validate(OpenTranscriptOptionsSchema, options, "transcript options");
  if (checked.isErr()) return new ResultAsync(Promise.resolve(err(checked.error)));
  return new ResultAsync(openChecked(options));
}

async function openChecked(options: OpenTranscriptOptions): Promise<Result<Transcript, KeelError>> {
  const { store, sessionId } = options;
  const clock = options.clock ?? systemClock;
  const headDoc = await readOrCreateHead(options, clock);
  if (headDoc.isErr()) return err(headDoc.error);
  const head = checkHead(sessionId, headDoc.value);
  if (head.isErr()) return err(head.error);
  const records = await store.logs.read(entriesKey(sessionId));
  if (records.isErr()) return err(records.error);
  const loaded = loadEntries(sessionId, records.value);
  if (loaded.isErr()) return err(loaded.error);
  // Seqs are dense within a log's life: the last record read is the head, unless there is none.
  let lastSeq = records.value[records.value.length - 1]?.seq;
  if (lastSeq === undefined) {
    const logHead = await store.logs.head(entriesKey(sessionId));
    if (logHead.isErr()) return err(logHead.error);
    lastSeq = logHead.value?.lastSeq ?? 0;
  }
  const { entries, byId } = loaded.value;
  let leafId = head.value.leafId;
  if (lastSeq > head.value.atSeq && entries.length > 0) leafId = (entries[entries.length - 1] as TranscriptEntry).id;
  if (leafId !== null && !byId.has(leafId)) {
    return err(new KeelError("corrupt", `transcript "${sessionId}" head names a leaf "${leafId}" that is not in its log`, { details: { location: headKey(sessionId).join("/"), leafId } }));
  }
  const tree = createMutableTree(entries, byId);
  return ok(createTranscript({ options, clock, tree, head: head.value, headVersion: headDoc.value.version, lastSeq, leafId }));
}

interface TranscriptState {
  options: OpenTranscriptOptions;
  clock: Clock;
  tree: MutableTranscriptTree;
  head: TranscriptHead;
  headVersion: number;
  lastSeq: number;
  leafId: string | null;
}

function invalid(message: string, details: Record<string, JsonValue> = {}): KeelError {
  return new KeelError("invalid_input", message, { details });
}

function createTranscript(state: TranscriptState): Transcript {
  const { store, sessionId } = state.options;
  const newEntryId = state.options.newEntryId ?? newId;
  let queue: Promise<unknown> = Promise.resolve();
  /** Runs writes one at a time, in call order. */
  const serialize = <T>(work: () => Promise<Result<T, KeelError>>): ResultAsync<T, KeelError> => {
    const run = queue.then(work, work);
    queue = run.catch(() => undefined);
    return new ResultAsync(run);
  };

  /** A caller's entry as it would be written: its own fields, the leaf as parent, an id and a timestamp (a throwing getter, clock or id maker is `invalid_input`). */
  const complete = (input: TranscriptEntryInput): Result<Record<string, unknown>, KeelError> => {
    try {
      if (typeof input !== "object" || input === null || Array.isArray(input)) return err(invalid("an entry must be an object with a type"));
      if (Object.hasOwn(input, "__proto__")) return err(invalid('an entry must not have a "__proto__" field: pass plain data', { field: "__proto__" }));
      const type = (input as { type?: unknown }).type;
      if (typeof type !== "string" || !isKnownEntryType(type)) {
        return err(invalid(`entry type ${typeof type === "string" ? JSON.stringify(type.slice(0, 64)) : typeof type} is not one this version writes: use message, model_change, thinking_change, compaction, branch_summary, custom, custom_message, label or session_info`, { type: typeof type === "string" ? type.slice(0, 64) : typeof type }));
      }
      let timestamp: string | undefined = input.timestamp;
      if (timestamp === undefined) {
        const now = isoNow(state.clock);
        if (now.isErr()) return err(now.error);
        timestamp = now.value;
      }
      return ok({ ...input, id: input.id ?? newEntryId(), parentId: state.leafId, timestamp });
    } catch (error) {
      return err(new KeelError("invalid_input", `the entry could not be read: ${error instanceof Error ? error.message : String(error)}: pass plain data`, { cause: error }));
    }
  };

  const prepare = (input: TranscriptEntryInput): Result<TranscriptEntry, KeelError> => {
    const raw = complete(input);
    if (raw.isErr()) return err(raw.error);
    const type = raw.value["type"] as string;
    const parsed = parseEntry(raw.value, `${type} entry`);
    if (parsed.isErr()) return err(parsed.error);
    const entry = parsed.value;
    if (state.tree.get(entry.id)) return err(new KeelError("conflict", `entry id "${entry.id}" is already in transcript "${sessionId}": use a new id`, { details: { entryId: entry.id } }));
    if (entry.type === "label" && !state.tree.get(entry["targetId"] as string)) {
      return err(new KeelError("not_found", `a label targets entry "${String(entry["targetId"])}", which is not in this transcript`, { details: { targetId: String(entry["targetId"]) } }));
    }
    if (entry.type === "compaction") {
      const path = state.tree.path(state.leafId);
      const firstKept = entry["firstKeptEntryId"];
      if (path.isErr() || !path.value.some((onPath) => onPath.id === firstKept)) {
        return err(invalid(`a compaction must keep from an entry on the path to the leaf; "${String(firstKept)}" is not on it`, { firstKeptEntryId: String(firstKept) }));
      }
    }
    return ok(entry);
  };

  /** Entries in the tree but not yet written (only while `deferUntilAssistant` holds a new session back). */
  const deferred: TranscriptEntry[] = [];
  let deferring = state.options.deferUntilAssistant === true && state.tree.size === 0 && state.lastSeq === 0;

  const writeEntries = async (entries: readonly TranscriptEntry[]): Promise<Result<void, KeelError>> => {
    if (deferring) {
      const assistant = entries.some((entry) => entry.type === "message" && (entry["message"] as { role?: unknown }).role === "assistant");
      if (!assistant) {
        for (const entry of entries) state.tree.add(entry);
        deferred.push(...entries);
        const last = entries[entries.length - 1];
        if (last) state.leafId = last.id;
        return ok(undefined);
      }
    }
    const batch = deferring ? [...deferred, ...entries] : entries;
    const appended = await store.logs.append(
      entriesKey(sessionId),
      batch.map((entry) => ({ id: entry.id, value: entry as unknown as JsonValue })),
      { expectedSeq: state.lastSeq },
    );
    if (appended.isErr()) return err(appended.error);
    state.lastSeq = appended.value.lastSeq;
    for (const entry of entries) state.tree.add(entry);
    deferring = false;
    deferred.length = 0;
    const last = entries[entries.length - 1];
    if (last) state.leafId = last.id;
    return ok(undefined);
  };

  const writeLeaf = async (id: string | null): Promise<Result<void, KeelError>> => {
    if (id !== null && !state.tree.get(id)) {
      return err(new KeelError("not_found", `entry "${id}" is not in transcript "${sessionId}": pass an existing entry id`, { details: { entryId: id } }));
    }
    if (id === state.leafId && state.head.atSeq === state.lastSeq && state.head.leafId === id) return ok(undefined);
    if (deferring) {
      // Nothing is written yet: the leaf moves in memory, and the first write makes it durable.
      state.leafId = id;
      return ok(undefined);
    }
    const next: TranscriptHead = { ...state.head, leafId: id, atSeq: state.lastSeq };
    const put = await store.docs.put(headKey(sessionId), next as unknown as JsonValue, { expectedVersion: state.headVersion });
    if (put.isErr()) return err(put.error);
    state.head = next;
    state.headVersion = put.value.version;
    state.leafId = id;
    return ok(undefined);
  };

  /** A leaf argument of a read: `undefined` for the current leaf. */
  const leafArgument = (leafId: unknown): Result<string | null, KeelError> =>
    leafId === undefined ? ok(state.leafId) : validate(LeafArgumentSchema, leafId, "leaf id (an entry id, or null)");

  const transcript: Transcript = {
    sessionId,
    parent: state.head.parent,
    store,
    clock: state.clock,
    events: state.options.events,
    leafId: () => state.leafId,
    tree: () => state.tree,
    append: (input) =>
      serialize(async () => {
        const entry = prepare(input);
        if (entry.isErr()) return err(entry.error);
        const written = await writeEntries([entry.value]);
        return written.map(() => entry.value);
      }),
    setLeaf: (id) => {
      const checked = validate(LeafArgumentSchema, id, "leaf id (an entry id, or null)");
      if (checked.isErr()) return new ResultAsync(Promise.resolve(err(checked.error)));
      return serialize(() => writeLeaf(checked.value));
    },
    branch: (fromId) => {
      const checked = validate(EntryIdSchema, fromId, "branch point (the id of an existing entry)");
      if (checked.isErr()) return new ResultAsync(Promise.resolve(err(checked.error)));
      return serialize(() => writeLeaf(checked.value));
    },
    path: (leafId) => leafArgument(leafId).andThen((id) => state.tree.path(id)),
    children: (id) => validate(LeafArgumentSchema, id, "parent id (an entry id, or null for the roots)").andThen((checked) => state.tree.children(checked)),
    label: (id) => (typeof id === "string" ? state.tree.label(id) : undefined),
    setLabel: (targetId, label) => transcript.append(label === undefined ? { type: "label", targetId } : { type: "label", targetId, label }),
    buildContext: (leafId) => leafArgument(leafId).andThen((id) => state.tree.buildContext(id)),
    navigate: (targetId, navigateOptions) => navigateTranscript(transcript, targetId, navigateOptions),
    compact: (compactOptions) => compactTranscript(transcript, compactOptions),
    fork: (given) => {
      const checked = validate(ForkOptionsSchema, given, "fork options");
      if (checked.isErr()) return new ResultAsync(Promise.resolve(err(checked.error)));
      const forkOptions = checked.value;
      const fromId = forkOptions.fromId === undefined ? state.leafId : forkOptions.fromId;
      const path = state.tree.path(fromId);
      if (path.isErr()) return new ResultAsync(Promise.resolve(err(path.error)));
      const target = forkOptions.store ?? store;
      const fits = checkEntriesFit(target, path.value);
      if (fits.isErr()) return new ResultAsync(Promise.resolve(err(fits.error)));
      return openTranscript({
        store: target,
        sessionId: forkOptions.sessionId,
        parent: { sessionId, entryId: fromId },
        clock: state.clock,
        ...(state.options.events ? { events: state.options.events } : {}),
        ...(state.options.newEntryId ? { newEntryId: state.options.newEntryId } : {}),
      }).andThen((child) => {
        if (child.tree().size > 0 || child.parent?.sessionId !== sessionId) {
          return err(new KeelError("conflict", `session "${forkOptions.sessionId}" already exists: fork into a new session id`, { details: { sessionId: forkOptions.sessionId } }));
        }
        return writeInto(child, path.value).map(() => child);
      });
    },
  };
  internalWriters.set(transcript, (entries) => serialize(() => writeEntries(entries)));
  return transcript;
}

/**
 * `too_large` (or `invalid_input`) for the first entry the store would refuse, by the store's own
 * encoding check: a fork or an import opens (creates) its session before it writes the entries,
 * so it asks this first and a refused one writes nothing.
 */
export function checkEntriesFit(store: KeelStore, entries: readonly TranscriptEntry[]): Result<void, KeelError> {
  const maxBytes = store.capabilities?.maxValueBytes ?? DEFAULT_MAX_VALUE_BYTES;
  for (const entry of entries) {
    const encoded = encodeValue(entry, maxBytes, `entry "${entry.id}"`);
    if (encoded.isErr()) return err(encoded.error);
  }
  return ok(undefined);
}

const internalWriters = new WeakMap<Transcript, (entries: readonly TranscriptEntry[]) => ResultAsync<void, KeelError>>();

/**
 * Writes ready-made entries (with their own ids and parents) into a transcript in one atomic
 * append: a fork's path, an imported file. Internal to the package.
 */
export function writeInto(transcript: Transcript, entries: readonly TranscriptEntry[]): ResultAsync<void, KeelError> {
  const writer = internalWriters.get(transcript);
  if (!writer) return new ResultAsync(Promise.resolve(err(invalid("not a transcript opened by openTranscript"))));
  if (entries.length === 0) return new ResultAsync(Promise.resolve(ok(undefined)));
  const known = new Map(transcript.tree().entries().map((entry) => [entry.id, entry] as const));
  for (const entry of entries) {
    if (known.has(entry.id)) return new ResultAsync(Promise.resolve(err(new KeelError("conflict", `entry id "${entry.id}" is already in transcript "${transcript.sessionId}"`, { details: { entryId: entry.id } }))));
    known.set(entry.id, entry);
  }
  for (const entry of entries) {
    if (entry.parentId !== null && !known.has(entry.parentId)) {
      return new ResultAsync(Promise.resolve(err(invalid(`entry "${entry.id}" names a parent "${entry.parentId}" that is not written`, { entryId: entry.id }))));
    }
  }
  return writer(entries);
}
