/**
 * A directory tree as inodes (so that hard links, and files written after they were unlinked or
 * renamed, are modelled as the kernel sees them): read from disk, written to disk, compared.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";

/** One inode. */
export type FsNode = { kind: "file"; data: Buffer } | { kind: "dir"; entries: Map<string, number> } | { kind: "symlink"; target: string };

/** A tree: its inodes by id and the id of its root directory. */
export interface FsTree {
  root: number;
  nodes: Map<number, FsNode>;
}

/** SQLite's shared-memory index (`-shm`) is written through mmap, not `write`: it is rebuilt at open and never part of a state. */
export function isVolatileName(name: string): boolean {
  return name.endsWith("-shm");
}

/** A deep copy of a node. */
export function cloneNode(node: FsNode): FsNode {
  if (node.kind === "file") return { kind: "file", data: Buffer.from(node.data) };
  if (node.kind === "dir") return { kind: "dir", entries: new Map(node.entries) };
  return { ...node };
}

/** A deep copy of a tree. */
export function cloneTree(tree: FsTree): FsTree {
  return { root: tree.root, nodes: new Map([...tree.nodes].map(([id, node]) => [id, cloneNode(node)])) };
}

/** Reads the tree under `directory` (files, directories, symbolic links; hard links become one inode). */
export function snapshotTree(directory: string): FsTree {
  const nodes = new Map<number, FsNode>();
  const byInode = new Map<string, number>();
  let next = 1;
  const visit = (at: string): number => {
    const stats = fs.lstatSync(at, { bigint: true });
    const identity = `${stats.dev}:${stats.ino}`;
    const known = byInode.get(identity);
    if (known !== undefined) return known;
    const id = next++;
    byInode.set(identity, id);
    if (stats.isDirectory()) {
      const entries = new Map<string, number>();
      nodes.set(id, { kind: "dir", entries });
      for (const name of fs.readdirSync(at).sort()) if (!isVolatileName(name)) entries.set(name, visit(path.join(at, name)));
    } else if (stats.isSymbolicLink()) nodes.set(id, { kind: "symlink", target: fs.readlinkSync(at) });
    else if (stats.isFile()) nodes.set(id, { kind: "file", data: fs.readFileSync(at) });
    else throw new Error(`${at} is neither a file, a directory nor a symbolic link`);
    return id;
  };
  const root = visit(directory);
  return { root, nodes };
}

/**
 * Writes the part of `tree` reachable from its root into `directory` (which must not exist).
 * Symbolic link targets under `from` are moved under `directory` (a state is rebuilt elsewhere
 * than it was recorded); hard links stay hard links.
 */
export function materializeTree(tree: FsTree, directory: string, from: string): void {
  const written = new Map<number, string>();
  const write = (id: number, at: string) => {
    const node = tree.nodes.get(id);
    if (!node) throw new Error(`inode ${id} is missing`);
    const first = written.get(id);
    if (first !== undefined && node.kind !== "dir") return fs.linkSync(first, at);
    written.set(id, at);
    if (node.kind === "file") fs.writeFileSync(at, node.data);
    else if (node.kind === "symlink") fs.symlinkSync(node.target === from || node.target.startsWith(`${from}/`) ? directory + node.target.slice(from.length) : node.target, at);
    else {
      fs.mkdirSync(at);
      for (const [name, child] of node.entries) if (!isVolatileName(name)) write(child, path.join(at, name));
    }
  };
  write(tree.root, directory);
}

/** The reachable tree as sorted text lines (path, kind, size and sha256 of data): for comparing and hashing states. */
export function describeTree(tree: FsTree): string[] {
  const lines: string[] = [];
  const visit = (id: number, at: string, seen: Set<number>) => {
    const node = tree.nodes.get(id)!;
    if (node.kind === "file") lines.push(`${at} file ${node.data.length} ${createHash("sha256").update(node.data).digest("hex").slice(0, 16)}`);
    else if (node.kind === "symlink") lines.push(`${at} -> ${node.target}`);
    else {
      lines.push(`${at}/`);
      if (seen.has(id)) return;
      for (const [name, child] of [...node.entries].sort(([a], [b]) => (a < b ? -1 : 1))) if (!isVolatileName(name)) visit(child, `${at}/${name}`, new Set([...seen, id]));
    }
  };
  visit(tree.root, "", new Set());
  return lines;
}

/** A short digest of the reachable tree (two states with one digest are the same state). */
export function treeDigest(tree: FsTree): string {
  return createHash("sha256").update(describeTree(tree).join("\n")).digest("hex").slice(0, 20);
}
