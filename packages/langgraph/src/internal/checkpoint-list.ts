/**
 * `list`: the checkpoints under a thread (or every thread), grouped by namespace, newest first,
 * filtered by `before`, metadata `filter` and `limit`. A namespace's documents are read a page at
 * a time (`readPage` where the store has it) and made into tuples a few ahead of the consumer.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointListOptions, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import type { JsonValue } from "@keel/core";
import type { DocMeta } from "@keel/store";
import { keyCursor } from "@keel/store/kit";
import { ListOptionsInputSchema, parseInput, readConfig } from "./checkpoint-input.js";
import { encodeSegment } from "./checkpoint-keys.js";
import { CheckpointDocumentSchema, parseStored, type CheckpointDocument } from "./checkpoint-records.js";
import { loadState, toTuple } from "./checkpoint-read.js";
import { unwrap, type SaverContext } from "./saver-context.js";

/** How many listed checkpoints are read ahead at once, one by one (a store without `readPage`). */
const LIST_BATCH = 16;

/**
 * How many listed checkpoints are made into tuples at once. It serves the LangChain-message
 * listing (bench/README.md, langgraph fourth pass: a whole page at once took 2.4× SqliteSaver's time).
 */
const LIST_AHEAD = 4;

/** How many listed checkpoints one `readPage` reads. */
const LIST_PAGE = 100;

/** What a listing keeps, and how many it may still yield (`undefined`: no limit). */
interface Listing {
  filter: Record<string, unknown> | undefined;
  remaining: number | undefined;
}

/** `list`: checkpoints newest first (see `KeelCheckpointSaver.list`). */
export async function* listTuples(context: SaverContext, config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
  const { threadId, namespace, checkpointId: onlyId } = readConfig(config, "list config");
  const listOptions = parseInput(ListOptionsInputSchema, options, "list options");
  const beforeId = listOptions?.before === undefined ? undefined : readConfig(options?.before, "list options.before").checkpointId;
  const listing: Listing = { filter: options?.filter, remaining: listOptions?.limit };
  const prefix = threadId === undefined ? context.keys.threads() : namespace === undefined ? context.keys.thread(threadId) : context.keys.checkpoints(threadId, namespace);
  const wantedNamespace = namespace === undefined ? undefined : encodeSegment(namespace);
  const groups = new Map<string, DocMeta[]>();
  for (const meta of await listAll(context, prefix)) {
    // [...prefix, "threads", thread, "ns", namespace, "checkpoints", id]
    if (meta.key.at(-2) !== "checkpoints") continue;
    if (wantedNamespace !== undefined && meta.key.at(-3) !== wantedNamespace) continue;
    const id = meta.key.at(-1) ?? "";
    if (onlyId !== undefined && id !== onlyId) continue;
    if (beforeId !== undefined && id >= beforeId) continue;
    const group = meta.key.slice(0, -1).join("/");
    let metas = groups.get(group);
    if (!metas) groups.set(group, (metas = []));
    metas.push(meta);
  }
  for (const metas of groups.values()) {
    yield* listNamespace(context, metas, listing);
    if (listing.remaining !== undefined && listing.remaining <= 0) return;
  }
}

/** The checkpoints of one namespace (`metas`, in any order), newest first, as `listing` allows. */
async function* listNamespace(context: SaverContext, metas: DocMeta[], listing: Listing): AsyncGenerator<CheckpointTuple> {
  metas.sort((left, right) => ((left.key.at(-1) ?? "") < (right.key.at(-1) ?? "") ? -1 : 1));
  // Which checkpoints of the namespace have pending writes: one listing, not a read each.
  const writesPrefix = [...metas[0]!.key.slice(0, -2), "writes"];
  const logs = await unwrap(context.store.logs.list(writesPrefix));
  const writeLogs = new Set(logs.filter((key) => key.length === writesPrefix.length + 1).map((key) => key.at(-1)!));
  // Newest first: read chunks from the end, each at once, and yield each newest first.
  let end = metas.length;
  while (end > 0) {
    if (listing.remaining !== undefined && listing.remaining <= 0) return;
    const start = Math.max(0, end - (listing.remaining === undefined ? LIST_PAGE : Math.min(LIST_PAGE, listing.remaining)));
    const documents = await readListed(context, metas, start, end);
    end = start;
    // Newest first, at most LIST_AHEAD tuples being made at once: the serializer's walk over
    // a value (LangChain messages) is a promise per node, and a whole page of them at once
    // only piles up garbage; a few ahead still overlap the reads of pending writes.
    const pending = documents.reverse();
    const ahead: Promise<CheckpointTuple | undefined>[] = [];
    let next = 0;
    while (next < pending.length || ahead.length > 0) {
      while (next < pending.length && ahead.length < LIST_AHEAD) {
        const document = pending[next++];
        const making = document === undefined ? Promise.resolve(undefined) : listed(context, document, listing.filter, writeLogs);
        making.catch(() => undefined); // awaited in its turn
        ahead.push(making);
      }
      const tuple = await ahead.shift();
      if (tuple === undefined) continue;
      if (listing.remaining !== undefined && listing.remaining <= 0) return;
      if (listing.remaining !== undefined) listing.remaining -= 1;
      yield tuple;
    }
  }
}

/**
 * The checkpoint documents of `metas[start..end)` (one namespace, ascending), in that order;
 * undefined for one deleted since listed. With `readPage`, one read of the page after
 * `metas[start - 1]` (it serves the listing: bench/README.md, langgraph issue 22, rows B to E);
 * a key it did not return (deleted, or pushed out by a checkpoint written since) is read alone.
 */
async function readListed(context: SaverContext, metas: DocMeta[], start: number, end: number): Promise<(CheckpointDocument | undefined)[]> {
  const { store } = context;
  const chunk = metas.slice(start, end);
  const parse = (key: string[], value: JsonValue) => parseStored(CheckpointDocumentSchema, value, `checkpoint ${key.join("/")}`);
  const readOne = async (key: string[]) => {
    const stored = await unwrap(store.docs.get(key));
    return stored === undefined ? undefined : parse(key, stored.value);
  };
  const readPage = store.capabilities.pageReads === true ? store.docs.readPage?.bind(store.docs) : undefined;
  if (readPage === undefined) {
    const out: (CheckpointDocument | undefined)[] = [];
    for (let at = 0; at < chunk.length; at += LIST_BATCH) out.push(...(await Promise.all(chunk.slice(at, at + LIST_BATCH).map(async (meta) => readOne(meta.key)))));
    return out;
  }
  const previous = metas[start - 1];
  const page = await unwrap(readPage(chunk[0]!.key.slice(0, -1), previous === undefined ? { limit: chunk.length } : { after: keyCursor(previous.key), limit: chunk.length }));
  const found = new Map(page.items.map((doc) => [doc.key.join("/"), doc]));
  return Promise.all(
    chunk.map(async (meta) => {
      const doc = found.get(meta.key.join("/"));
      return doc === undefined ? readOne(meta.key) : parse(doc.key, doc.value);
    }),
  );
}

/** One listed checkpoint as a tuple, or undefined when not matching `filter`. */
async function listed(context: SaverContext, document: CheckpointDocument, filter: Record<string, unknown> | undefined, writeLogs: ReadonlySet<string>): Promise<CheckpointTuple | undefined> {
  const loaded = loadState(context, document);
  const state = loaded instanceof Promise ? await loaded : loaded;
  if (filter) {
    const metadata = state.metadata as Record<string, unknown>;
    // An absent field matches undefined, as in LangGraph's savers; an inherited one is absent.
    if (!Object.entries(filter).every(([name, value]) => (Object.hasOwn(metadata, name) ? metadata[name] : undefined) === value)) return undefined;
  }
  return toTuple(context, document, writeLogs, undefined, state);
}

/** Every document key under `prefix`, in the store's order (pages of 1,000). */
export async function listAll(context: SaverContext, prefix: string[]): Promise<DocMeta[]> {
  const all: DocMeta[] = [];
  let after: string | undefined;
  do {
    const page = await unwrap(context.store.docs.list(prefix, after === undefined ? { limit: 1000 } : { after, limit: 1000 }));
    all.push(...page.items);
    after = page.next;
  } while (after !== undefined);
  return all;
}
