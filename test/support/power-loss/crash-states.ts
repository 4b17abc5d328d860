/**
 * The states a power cut can leave, under the strict model (as ALICE and LazyFS test SQLite and
 * LevelDB):
 *
 * - a file's data written since its last fsync/fdatasync began is lost, or a prefix of those
 *   writes is kept, the next one possibly torn at a 4 KiB boundary of the file;
 * - a directory change (create, mkdir, link, symlink, unlink, rmdir, rename) made since an fsync
 *   of that directory (of both, for a rename between two) last began may be lost.
 *
 * A crash point is the moment after one recorded change. At each, a few variants are built: all
 * pending changes lost; directory changes kept but pending data lost (the zero-length file after
 * a rename); everything kept (what a process kill leaves); directory changes kept as an in-order
 * prefix, and as a prefix per directory (directories commit independently), with random data
 * prefixes and tears. States that are byte-for-byte equal are explored once.
 */
import { applyEvent, directoriesOf, isData, isMetadata, newNode, type DataEvent, type FsEvent, type RecordedChanges } from "./fs-events.js";
import { cloneTree, treeDigest, type FsTree } from "./fs-tree.js";

/** The page size at which a write may tear. */
export const PAGE_BYTES = 4096;

/** One state a power cut can leave. */
export interface CrashState {
  /** The position (strace line) of the last change before the cut. */
  point: number;
  /** How pending changes were kept (`lost`, `metadata`, `all`, `prefix`, `per-directory`). */
  variant: string;
  tree: FsTree;
  /** The acknowledgement file's lines written before the cut. */
  acknowledged: string[];
}

/** What a variant keeps of the changes not yet durable. */
export interface PendingChoice {
  /** Directory changes kept: none, all, the first `n` (in order), or the first `n` per directory. */
  metadata: "none" | "all" | { prefix: number } | { perDirectory: ReadonlyMap<number, number> };
  /** Data changes kept per inode: none, all, or the first `keep` and the next torn after `tornBytes` bytes. */
  data: "none" | "all" | ReadonlyMap<number, { keep: number; tornBytes: number }>;
}

/** A small seeded generator (mulberry32): the same trace gives the same states. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** Which changes before `point` are durable: those an fsync of their inode(s), begun after them, finished by `point`. */
export function durableAt(events: readonly FsEvent[], point: number): Set<FsEvent> {
  const syncs = new Map<number, { start: number; at: number }[]>();
  for (const event of events) {
    if (event.at > point) break;
    if (event.kind === "sync") syncs.set(event.inode, [...(syncs.get(event.inode) ?? []), event]);
  }
  const synced = (inode: number, after: number) => (syncs.get(inode) ?? []).some((sync) => sync.start > after);
  const durable = new Set<FsEvent>();
  for (const event of events) {
    if (event.at > point) break;
    if (isData(event) && synced(event.inode, event.at)) durable.add(event);
    if (isMetadata(event) && directoriesOf(event).every((dir) => synced(dir, event.at))) durable.add(event);
  }
  return durable;
}

/** The bytes of `event` kept when it tears after `tornBytes` bytes (rounded to the file's 4 KiB pages). */
export function tornWrite(event: Extract<DataEvent, { kind: "write" }>, tornBytes: number): Extract<DataEvent, { kind: "write" }> | undefined {
  const end = Math.floor((event.offset + tornBytes) / PAGE_BYTES) * PAGE_BYTES;
  if (end <= event.offset) return undefined;
  return { ...event, bytes: event.bytes.subarray(0, Math.min(end - event.offset, event.bytes.length)) };
}

/** Rebuilds the directory at `point` keeping the durable changes and what `choice` keeps of the others. */
export function crashState(changes: RecordedChanges, point: number, choice: PendingChoice): FsTree {
  const tree = cloneTree(changes.initial);
  for (const [inode, kind] of changes.born) tree.nodes.set(inode, newNode(kind));
  const durable = durableAt(changes.events, point);
  const metadataSeen = new Map<number, number>();
  const dataSeen = new Map<number, number>();
  const cut = new Set<number>();
  let metadataCount = 0;
  for (const event of changes.events) {
    if (event.at > point) break;
    if (durable.has(event)) {
      applyEvent(tree, event);
    } else if (isMetadata(event)) {
      const { metadata } = choice;
      const dirs = directoriesOf(event);
      let keep: boolean;
      if (metadata === "none" || metadata === "all") keep = metadata === "all";
      else if ("prefix" in metadata) keep = metadataCount < metadata.prefix;
      else keep = dirs.every((dir) => !cut.has(dir) && (metadataSeen.get(dir) ?? 0) < (metadata.perDirectory.get(dir) ?? Infinity));
      metadataCount += 1;
      for (const dir of dirs) metadataSeen.set(dir, (metadataSeen.get(dir) ?? 0) + 1);
      // Per directory, a change lost ends what its directories keep (they commit in order).
      if (!keep) for (const dir of dirs) cut.add(dir);
      if (keep) applyEvent(tree, event);
    } else if (isData(event)) {
      const { data } = choice;
      const seen = dataSeen.get(event.inode) ?? 0;
      dataSeen.set(event.inode, seen + 1);
      if (data === "none") continue;
      if (data === "all") {
        applyEvent(tree, event);
        continue;
      }
      const plan = data.get(event.inode) ?? { keep: Infinity, tornBytes: 0 };
      if (seen < plan.keep) applyEvent(tree, event);
      else if (seen === plan.keep && event.kind === "write" && plan.tornBytes > 0) {
        const torn = tornWrite(event, plan.tornBytes);
        if (torn) applyEvent(tree, torn);
      }
    }
  }
  return tree;
}

/** The positions after which a cut is modelled: after each change and each fsync below the root. */
export function crashPoints(changes: RecordedChanges): number[] {
  return [...new Set(changes.events.filter((event) => event.kind !== "ack").map((event) => event.at))];
}

/** `count` items of `items`, evenly spaced, the last always among them. */
export function sampleEvenly<T>(items: readonly T[], count: number): T[] {
  if (items.length <= count) return [...items];
  if (count <= 1) return items.slice(-1);
  return Array.from({ length: count }, (_, index) => items[Math.round((index * (items.length - 1)) / (count - 1))]!);
}

/** The random choices of the `prefix` and `per-directory` variants at `point`. */
function randomChoices(changes: RecordedChanges, point: number, random: () => number): PendingChoice[] {
  const durable = durableAt(changes.events, point);
  const pending = changes.events.filter((event) => event.at <= point && !durable.has(event));
  const metadata = pending.filter(isMetadata);
  const dataCounts = new Map<number, { count: number; bytes: number }>();
  for (const event of pending.filter(isData)) {
    const seen = dataCounts.get(event.inode) ?? { count: 0, bytes: 0 };
    dataCounts.set(event.inode, { count: seen.count + 1, bytes: Math.max(seen.bytes, event.kind === "write" ? event.bytes.length : 0) });
  }
  const data = () =>
    new Map([...dataCounts].map(([inode, { count, bytes }]) => [inode, { keep: Math.floor(random() * (count + 1)), tornBytes: random() < 0.5 ? Math.floor(random() * bytes) : 0 }]));
  const perDirectory = new Map<number, number>();
  for (const event of metadata) for (const dir of directoriesOf(event)) perDirectory.set(dir, (perDirectory.get(dir) ?? 0) + 1);
  // Each directory keeps none, all, or a random prefix of its pending changes (a third each): a
  // directory whose changes all survive beside one whose changes are all lost (a lock directory
  // renamed into place, its entry never made durable) is the case a uniform prefix rarely draws.
  for (const [dir, count] of perDirectory) {
    const draw = random();
    perDirectory.set(dir, draw < 1 / 3 ? 0 : draw < 2 / 3 ? count : Math.floor(random() * (count + 1)));
  }
  return [
    { metadata: { prefix: Math.floor(random() * (metadata.length + 1)) }, data: data() },
    { metadata: { perDirectory }, data: data() },
  ];
}

/**
 * The distinct states a power cut can leave, at most `maxStates`: crash points sampled evenly,
 * five variants at each, duplicates removed, then sampled evenly again if still too many.
 */
export function crashStates(changes: RecordedChanges, options: { maxStates: number; seed?: number }): { states: CrashState[]; points: number; considered: number } {
  const random = seededRandom(options.seed ?? 29);
  const points = sampleEvenly(crashPoints(changes), options.maxStates);
  const seen = new Set<string>();
  const states: CrashState[] = [];
  let considered = 0;
  for (const point of points) {
    const acknowledged = changes.events.filter((event): event is Extract<FsEvent, { kind: "ack" }> => event.kind === "ack" && event.at <= point).map((event) => event.line);
    const variants: [string, PendingChoice][] = [
      ["lost", { metadata: "none", data: "none" }],
      ["metadata", { metadata: "all", data: "none" }],
      ["all", { metadata: "all", data: "all" }],
      ...randomChoices(changes, point, random).map((choice, index): [string, PendingChoice] => [index === 0 ? "prefix" : "per-directory", choice]),
    ];
    for (const [variant, choice] of variants) {
      considered += 1;
      const tree = crashState(changes, point, choice);
      const digest = `${treeDigest(tree)}:${acknowledged.length}`;
      if (seen.has(digest)) continue;
      seen.add(digest);
      states.push({ point, variant, tree, acknowledged });
    }
  }
  return { states: sampleEvenly(states, options.maxStates), points: points.length, considered };
}
