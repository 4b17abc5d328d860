import { createHash } from "node:crypto";
import { join } from "node:path";
import type { SkillIo } from "../skill-io.js";

/** The name of the runtime metadata file beside a managed skill's content (not part of its digest). */
export const METADATA_FILE = ".keel-skill.json";

/** Bounds of a skill tree that is imported or digested. */
export interface SkillTreeLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
  maxDepth: number;
}

/** One regular file of a skill tree. */
export interface SkillTreeFile {
  /** `/`-separated path relative to the skill directory, NFC-normalised. */
  relative: string;
  /** The path on disk. */
  path: string;
  /** The path relative to the skill directory as it is on disk (platform separators, names as listed). */
  diskRelative: string;
  size: number;
}

/** Something in a skill tree that cannot be imported. */
export type SkillTreeProblem = { path: string; reason: string };

/** A listed tree: its files sorted by the UTF-8 bytes of their relative paths, and its problems. */
export interface SkillTreeListing {
  files: SkillTreeFile[];
  /** Directories relative to the skill directory as on disk, parents before children. */
  directories: string[];
  problems: SkillTreeProblem[];
  bytes: number;
}

// A name that would mean something else on another platform: separators, drive colons, control characters.
const UNSAFE_NAME = /[\\/:*?"<>|\u0000-\u001f\u007f]/u;

/** Orders paths by their UTF-8 bytes (the same on every platform, unlike locale or UTF-16 order). */
export function compareUtf8(left: string, right: string): number {
  return Buffer.compare(Buffer.from(left, "utf8"), Buffer.from(right, "utf8"));
}

/**
 * Lists a skill tree without following anything: every entry must be a regular file or a
 * directory (no symlinks, devices, sockets or FIFOs), with a name that is portable, within the
 * limits. The metadata file at the top is left out. Never throws for what it finds: problems are
 * collected; an I/O error on the root itself is thrown.
 */
export async function listSkillTree(io: SkillIo, root: string, limits: SkillTreeLimits): Promise<SkillTreeListing> {
  const listing: SkillTreeListing = { files: [], directories: [], problems: [], bytes: 0 };
  const walk = async (directory: string, relative: string, diskRelative: string, depth: number): Promise<void> => {
    let names: string[];
    try {
      names = await io.readdir(directory);
    } catch (error) {
      if (relative === "") throw error;
      listing.problems.push({ path: directory, reason: `cannot be listed: ${String(error)}` });
      return;
    }
    names.sort(compareUtf8);
    for (const name of names) {
      // Past a count or size limit the verdict is known: stop walking (a huge tree is refused quickly).
      if (listing.files.length > limits.maxFiles || listing.bytes > limits.maxTotalBytes) return;
      if (relative === "" && name === METADATA_FILE) continue;
      const path = join(directory, name);
      const childRelative = relative === "" ? name.normalize("NFC") : `${relative}/${name.normalize("NFC")}`;
      const childDisk = diskRelative === "" ? name : join(diskRelative, name);
      if (UNSAFE_NAME.test(name) || name === "." || name === "..") {
        listing.problems.push({ path, reason: "the name holds a character that is a separator or control character on some platform" });
        continue;
      }
      let stat;
      try {
        stat = await io.lstat(path);
      } catch (error) {
        listing.problems.push({ path, reason: `cannot be read: ${String(error)}` });
        continue;
      }
      if (stat.isSymbolicLink()) {
        listing.problems.push({ path, reason: "is a symbolic link: a skill must hold only regular files and directories" });
      } else if (stat.isDirectory()) {
        if (depth + 1 > limits.maxDepth) {
          listing.problems.push({ path, reason: `is deeper than ${limits.maxDepth} levels` });
          continue;
        }
        listing.directories.push(childDisk);
        await walk(path, childRelative, childDisk, depth + 1);
      } else if (!stat.isFile()) {
        listing.problems.push({ path, reason: "is not a regular file (a device, socket or FIFO)" });
      } else if (stat.size > limits.maxFileBytes) {
        listing.problems.push({ path, reason: `has ${stat.size} bytes, more than the ${limits.maxFileBytes} allowed per file` });
      } else {
        listing.files.push({ relative: childRelative, path, diskRelative: childDisk, size: stat.size });
        listing.bytes += stat.size;
      }
    }
  };
  await walk(root, "", "", 0);
  if (listing.files.length > limits.maxFiles) {
    listing.problems.push({ path: root, reason: `holds ${listing.files.length} files, more than the ${limits.maxFiles} allowed` });
  }
  if (listing.bytes > limits.maxTotalBytes) {
    listing.problems.push({ path: root, reason: `holds ${listing.bytes} bytes, more than the ${limits.maxTotalBytes} allowed` });
  }
  listing.files.sort((left, right) => compareUtf8(left.relative, right.relative));
  return listing;
}

/** The digest format's version tag (part of what is hashed). */
const DIGEST_HEADER = "keel-skill-tree:1\n";

/**
 * The content digest of a tree: sha256 over a header and, for each file in UTF-8 path order,
 * its NFC relative path, its size and its bytes. Modes, times, owners and empty directories do
 * not count, so the digest is the same on every platform and after a copy.
 */
export function digestFiles(files: readonly { relative: string; bytes: Uint8Array }[]): string {
  const hash = createHash("sha256");
  hash.update(DIGEST_HEADER);
  for (const file of files) {
    hash.update(`${file.relative}\u0000${file.bytes.length}\u0000`);
    hash.update(file.bytes);
  }
  return `sha256:${hash.digest("hex")}`;
}

/** Reads the listed files and digests them (see {@link digestFiles}); a file that changed size since the listing is an error. */
export async function readAndDigest(io: SkillIo, listing: SkillTreeListing): Promise<{ digest: string; contents: { relative: string; diskRelative: string; bytes: Buffer }[] }> {
  const contents: { relative: string; diskRelative: string; bytes: Buffer }[] = [];
  for (const file of listing.files) {
    const bytes = await io.readFile(file.path);
    if (bytes.length !== file.size) throw Object.assign(new Error(`${file.path} changed while it was read`), { code: "ECHANGED" });
    contents.push({ relative: file.relative, diskRelative: file.diskRelative, bytes });
  }
  return { digest: digestFiles(contents), contents };
}
