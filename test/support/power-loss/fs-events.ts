/**
 * Turns recorded system calls into the file-system changes they made below one root directory,
 * as changes of inodes (a data change names the inode it wrote, a metadata change the directory
 * or directories it changed), plus the fsyncs that made them durable and the acknowledgement
 * lines the workload wrote to its acknowledgement file (outside the root, so not modelled).
 *
 * It keeps the tree as the running process saw it (everything applied at once), starting from
 * the snapshot taken before the workload ran; `final` is that tree after the last call, which a
 * test compares with the real directory to prove the trace was read completely.
 */
import path from "node:path";
import { cloneTree, type FsNode, type FsTree } from "./fs-tree.js";
import { fdArg, iovecArg, stringArg, type Syscall } from "./strace-parse.js";

/** A change, a durability point or an acknowledgement, at the position its call finished (`at`). */
export type FsEvent =
  | { kind: "link"; at: number; dir: number; name: string; inode: number }
  | { kind: "unlink"; at: number; dir: number; name: string }
  | { kind: "rename"; at: number; fromDir: number; fromName: string; toDir: number; toName: string }
  | { kind: "write"; at: number; inode: number; offset: number; bytes: Buffer }
  | { kind: "truncate"; at: number; inode: number; size: number }
  /** An fsync or fdatasync of `inode`, begun at `start`: what finished before `start` is durable from `at` on. */
  | { kind: "sync"; at: number; start: number; inode: number }
  | { kind: "ack"; at: number; line: string };

/** The kinds of {@link FsEvent} that change a directory (durable once that directory is fsynced). */
export type MetadataEvent = Extract<FsEvent, { kind: "link" | "unlink" | "rename" }>;
/** The kinds of {@link FsEvent} that change a file's data (durable once the file is fsynced). */
export type DataEvent = Extract<FsEvent, { kind: "write" | "truncate" }>;

/** What the calls did below the root. */
export interface RecordedChanges {
  /** The snapshot the workload started from (inode ids continue above its ids). */
  initial: FsTree;
  events: FsEvent[];
  /** The kind of every inode created by the workload (it exists, empty, from its creation). */
  born: Map<number, "file" | "dir" | { target: string }>;
  /** The tree as the process saw it at the end. */
  final: FsTree;
}

const O_CREAT = /\bO_CREAT\b/;
const O_TRUNC = /\bO_TRUNC\b/;
const O_APPEND = /\bO_APPEND\b/;

/**
 * Reads `calls` (see strace-parse.ts) into the changes below `root` (a real path), starting from
 * `initial` (its snapshot before the run); writes to `ackFile` become acknowledgement events, one
 * per line.
 */
export function interpretCalls(calls: readonly Syscall[], root: string, initial: FsTree, ackFile: string): RecordedChanges {
  const tree = cloneTree(initial);
  const events: FsEvent[] = [];
  const born = new Map<number, "file" | "dir" | { target: string }>();
  let nextInode = Math.max(...tree.nodes.keys()) + 1;
  /** Open descriptors below the root (or of the acknowledgement file: inode -1). */
  const fds = new Map<number, { inode: number; position: number; append: boolean }>();
  let ackPartial = "";

  const dirNode = (id: number) => {
    const node = tree.nodes.get(id);
    if (node?.kind !== "dir") throw new Error(`inode ${id} is not a directory`);
    return node;
  };
  /** The path's parts below the root, or `undefined` when it is outside. */
  const below = (absolute: string): string[] | undefined => {
    if (absolute === root) return [];
    if (!absolute.startsWith(`${root}/`)) return undefined;
    return absolute.slice(root.length + 1).split("/").filter((part) => part !== "" && part !== ".");
  };
  /** Follows a path from the root, resolving symbolic links on the way (not the last part unless `follow`). */
  const lookup = (parts: readonly string[], follow: boolean, depth = 0): number | undefined => {
    let current = tree.root;
    for (let index = 0; index < parts.length; index++) {
      const node = tree.nodes.get(current);
      if (node?.kind !== "dir") return undefined;
      const child = node.entries.get(parts[index]!);
      if (child === undefined) return undefined;
      const childNode = tree.nodes.get(child)!;
      if (childNode.kind === "symlink" && (index < parts.length - 1 || follow)) {
        if (depth > 16) throw new Error("symbolic link loop");
        const target = path.isAbsolute(childNode.target) ? childNode.target : path.join(root, ...parts.slice(0, index), childNode.target);
        const inside = below(path.resolve(target));
        if (!inside) return undefined;
        const resolved = lookup(inside, true, depth + 1);
        if (resolved === undefined) return undefined;
        current = resolved;
      } else current = child;
    }
    return current;
  };
  /** The parent directory's inode and the last name of a path below the root. */
  const parentOf = (absolute: string): { dir: number; name: string } | undefined => {
    const parts = below(absolute);
    if (!parts || parts.length === 0) return undefined;
    const dir = lookup(parts.slice(0, -1), true);
    return dir === undefined ? undefined : { dir, name: parts.at(-1)! };
  };
  const pathArg = (dirArg: string | undefined, nameArg: string): string => {
    const name = stringArg(nameArg).toString("utf8");
    if (path.isAbsolute(name)) return path.resolve(name);
    const base = dirArg === undefined ? process.cwd() : fdArg(dirArg).path ?? process.cwd();
    return path.resolve(base, name);
  };

  const apply = (event: FsEvent) => {
    applyEvent(tree, event);
    events.push(event);
  };
  const create = (dir: number, name: string, kind: "file" | "dir" | { target: string }, at: number): number => {
    const inode = nextInode++;
    born.set(inode, kind);
    tree.nodes.set(inode, newNode(kind));
    apply({ kind: "link", at, dir, name, inode });
    return inode;
  };
  const fileNode = (inode: number) => {
    const node = tree.nodes.get(inode);
    if (node?.kind !== "file") throw new Error(`inode ${inode} is not a file`);
    return node;
  };
  const write = (fd: number, bytes: Buffer, offset: number | undefined, at: number) => {
    const open = fds.get(fd);
    if (!open) return;
    if (open.inode === -1) {
      const text = ackPartial + bytes.toString("utf8");
      const lines = text.split("\n");
      ackPartial = lines.pop()!;
      for (const line of lines) events.push({ kind: "ack", at, line });
      return;
    }
    if (bytes.length === 0) return;
    const position = offset ?? (open.append ? fileNode(open.inode).data.length : open.position);
    apply({ kind: "write", at, inode: open.inode, offset: position, bytes });
    if (offset === undefined) open.position = position + bytes.length;
  };

  for (const call of calls) {
    if (call.result < 0) continue;
    const { args, end: at } = call;
    switch (call.name) {
      case "open":
      case "openat":
      case "creat": {
        const [dirArg, nameArg, flagArg] = call.name === "openat" ? args : [undefined, args[0]!, call.name === "creat" ? "O_CREAT|O_TRUNC" : args[1]];
        const absolute = call.resultPath ?? pathArg(dirArg, nameArg!);
        if (absolute === ackFile) {
          fds.set(call.result, { inode: -1, position: 0, append: true });
          break;
        }
        const parts = below(absolute);
        if (!parts) {
          fds.delete(call.result);
          break;
        }
        let inode = lookup(parts, true);
        if (inode === undefined && O_CREAT.test(flagArg ?? "")) {
          const parent = parentOf(absolute);
          if (!parent) throw new Error(`created ${absolute} in a directory the trace never made`);
          inode = create(parent.dir, parent.name, "file", at);
        }
        if (inode === undefined) throw new Error(`opened ${absolute}, which the trace never made`);
        if (O_TRUNC.test(flagArg ?? "") && tree.nodes.get(inode)?.kind === "file" && fileNode(inode).data.length > 0) apply({ kind: "truncate", at, inode, size: 0 });
        fds.set(call.result, { inode, position: 0, append: O_APPEND.test(flagArg ?? "") });
        break;
      }
      case "close":
        fds.delete(fdArg(args[0]!).fd);
        break;
      case "lseek": {
        const open = fds.get(fdArg(args[0]!).fd);
        if (open) open.position = call.result;
        break;
      }
      case "write":
        write(fdArg(args[0]!).fd, stringArg(args[1]!).subarray(0, call.result), undefined, at);
        break;
      case "pwrite64":
        write(fdArg(args[0]!).fd, stringArg(args[1]!).subarray(0, call.result), Number(args[3]), at);
        break;
      case "writev":
        write(fdArg(args[0]!).fd, iovecArg(args[1]!).subarray(0, call.result), undefined, at);
        break;
      case "pwritev":
        write(fdArg(args[0]!).fd, iovecArg(args[1]!).subarray(0, call.result), Number(args[3]), at);
        break;
      case "ftruncate": {
        const open = fds.get(fdArg(args[0]!).fd);
        if (open && open.inode !== -1) apply({ kind: "truncate", at, inode: open.inode, size: Number(args[1]) });
        break;
      }
      case "truncate": {
        const parts = below(pathArg(undefined, args[0]!));
        const inode = parts ? lookup(parts, true) : undefined;
        if (inode !== undefined) apply({ kind: "truncate", at, inode, size: Number(args[1]) });
        break;
      }
      case "fsync":
      case "fdatasync": {
        const open = fds.get(fdArg(args[0]!).fd);
        if (open && open.inode !== -1) events.push({ kind: "sync", at, start: call.start, inode: open.inode });
        break;
      }
      case "mkdir":
      case "mkdirat": {
        const absolute = call.name === "mkdir" ? pathArg(undefined, args[0]!) : pathArg(args[0], args[1]!);
        const parent = parentOf(absolute);
        if (parent) create(parent.dir, parent.name, "dir", at);
        break;
      }
      case "symlink":
      case "symlinkat": {
        const target = stringArg(args[0]!).toString("utf8");
        const absolute = call.name === "symlink" ? pathArg(undefined, args[1]!) : pathArg(args[1], args[2]!);
        const parent = parentOf(absolute);
        if (parent) create(parent.dir, parent.name, { target }, at);
        break;
      }
      case "link":
      case "linkat": {
        const [from, to] = call.name === "link" ? [pathArg(undefined, args[0]!), pathArg(undefined, args[1]!)] : [pathArg(args[0], args[1]!), pathArg(args[2], args[3]!)];
        const source = parentOf(from);
        const target = parentOf(to);
        if (!source || !target) break;
        const inode = dirNode(source.dir).entries.get(source.name);
        if (inode !== undefined) apply({ kind: "link", at, dir: target.dir, name: target.name, inode });
        break;
      }
      case "unlink":
      case "unlinkat":
      case "rmdir": {
        const absolute = call.name === "unlinkat" ? pathArg(args[0], args[1]!) : pathArg(undefined, args[0]!);
        const parent = parentOf(absolute);
        if (parent) apply({ kind: "unlink", at, dir: parent.dir, name: parent.name });
        break;
      }
      case "rename":
      case "renameat":
      case "renameat2": {
        const [from, to] = call.name === "rename" ? [pathArg(undefined, args[0]!), pathArg(undefined, args[1]!)] : [pathArg(args[0], args[1]!), pathArg(args[2], args[3]!)];
        const source = parentOf(from);
        const target = parentOf(to);
        if (source && target) apply({ kind: "rename", at, fromDir: source.dir, fromName: source.name, toDir: target.dir, toName: target.name });
        else if (source || target) throw new Error(`a rename across the root's edge (${from} → ${to}) is not modelled`);
        break;
      }
      default:
        break;
    }
  }
  return { initial, events, born, final: tree };
}

/** A new, empty node of `kind`. */
export function newNode(kind: "file" | "dir" | { target: string }): FsNode {
  if (kind === "file") return { kind: "file", data: Buffer.alloc(0) };
  if (kind === "dir") return { kind: "dir", entries: new Map() };
  return { kind: "symlink", target: kind.target };
}

/**
 * Applies one change to `tree` (in place). Changes are applied whatever state the tree is in:
 * a state that kept some changes and lost others can lack an entry a later change names, which
 * then changes nothing.
 */
export function applyEvent(tree: FsTree, event: FsEvent): void {
  const dir = (id: number) => {
    const node = tree.nodes.get(id);
    return node?.kind === "dir" ? node : undefined;
  };
  switch (event.kind) {
    case "link":
      dir(event.dir)?.entries.set(event.name, event.inode);
      break;
    case "unlink":
      dir(event.dir)?.entries.delete(event.name);
      break;
    case "rename": {
      const source = dir(event.fromDir);
      const inode = source?.entries.get(event.fromName);
      if (inode === undefined) break;
      source!.entries.delete(event.fromName);
      dir(event.toDir)?.entries.set(event.toName, inode);
      break;
    }
    case "write": {
      const node = tree.nodes.get(event.inode);
      if (node?.kind !== "file") break;
      const end = event.offset + event.bytes.length;
      if (end > node.data.length) node.data = Buffer.concat([node.data, Buffer.alloc(end - node.data.length)]);
      event.bytes.copy(node.data, event.offset);
      break;
    }
    case "truncate": {
      const node = tree.nodes.get(event.inode);
      if (node?.kind !== "file") break;
      node.data = event.size <= node.data.length ? Buffer.from(node.data.subarray(0, event.size)) : Buffer.concat([node.data, Buffer.alloc(event.size - node.data.length)]);
      break;
    }
    default:
      break;
  }
}

/** True for a change of a directory. */
export function isMetadata(event: FsEvent): event is MetadataEvent {
  return event.kind === "link" || event.kind === "unlink" || event.kind === "rename";
}

/** True for a change of a file's data. */
export function isData(event: FsEvent): event is DataEvent {
  return event.kind === "write" || event.kind === "truncate";
}

/** The directories a metadata change touches (all must be fsynced for it to be durable). */
export function directoriesOf(event: MetadataEvent): number[] {
  return event.kind === "rename" ? [...new Set([event.fromDir, event.toDir])] : [event.dir];
}
