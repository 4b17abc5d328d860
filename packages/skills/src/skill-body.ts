import { constants, promises as fs } from "node:fs";
import { basename, isAbsolute } from "node:path";
import { type EventBus, KeelError, SafeNameSchema, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { locateFrontmatter } from "./internal/frontmatter-locate.js";
import { isInside } from "./internal/skill-scan.js";

/** A skill body read on demand (`library.readBody`). */
export interface SkillBody {
  /** The skill name. */
  name: string;
  /** Real path of the SKILL.md read. */
  path: string;
  /** The text after the frontmatter (the whole file when it has none). */
  text: string;
  /** Bytes read (the whole file). */
  bytes: number;
}

/** What {@link readSkillBody} needs from its library. */
export interface SkillBodySource {
  layers: readonly { name: string; dir: string }[];
  maxFileBytes: number;
  events?: EventBus;
}

const BodySkillSchema = z.looseObject({
  name: z.string().min(1).max(1024),
  path: z
    .string()
    .min(1)
    .max(4096)
    .refine((path) => isAbsolute(path) && ["SKILL.md", "skill.md"].includes(basename(path)), { message: "must be the absolute path of a SKILL.md" }),
});

const ContextSchema = z.object({ role: SafeNameSchema, missionId: SafeNameSchema.nullable().optional() }).strict();

function errorCode(error: unknown): string | undefined {
  return typeof error === "object" && error !== null ? (error as { code?: string }).code : undefined;
}

async function realPathOf(path: string): Promise<string> {
  try {
    return await fs.realpath(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") throw new KeelError("not_found", `skill file ${path} no longer exists: resolve the view again`, { details: { path } });
    throw error;
  }
}

async function readCapped(path: string, maxBytes: number): Promise<Buffer> {
  // Non-blocking open: a FIFO must not hang the read.
  const handle = await fs.open(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new KeelError("not_found", `${path} is not a file`, { details: { path } });
    const tooLarge = () =>
      new KeelError("too_large", `skill file ${path} is larger than ${maxBytes} bytes`, { details: { path, maxBytes, bytes: stat.size } });
    if (stat.size > maxBytes) throw tooLarge();
    // Read one byte past the cap so that a file that grew since the stat is still caught.
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > maxBytes) throw tooLarge();
    return buffer.subarray(0, length);
  } finally {
    await handle.close();
  }
}

/**
 * Reads one skill body on demand and emits `agent.io.read` (role, mission, path, bytes, skill).
 * The file must be a SKILL.md whose real path is inside one of `source.layers`.
 */
export function readSkillBody(
  source: SkillBodySource,
  skill: { name: string; path: string },
  context: { role: string; missionId?: string | null },
): ResultAsync<SkillBody, KeelError> {
  const checked = validate(BodySkillSchema, skill, "skill").andThen(() => validate(ContextSchema, context, "read context"));
  if (checked.isErr()) return errAsync(checked.error);
  const run = async (): Promise<SkillBody> => {
    const real = await realPathOf(skill.path);
    const roots = await Promise.all(source.layers.map((layer) => fs.realpath(layer.dir).catch(() => undefined)));
    if (!roots.some((root) => root !== undefined && isInside(root, real))) {
      throw new KeelError("invalid_input", `${skill.path} is not inside any layer of this skill library`, { details: { path: skill.path } });
    }
    const buffer = await readCapped(real, source.maxFileBytes);
    const location = locateFrontmatter(buffer, buffer.length, true);
    const text = buffer.toString("utf8", location.kind === "found" ? location.bodyStart : 0);
    source.events?.emit({
      type: "agent.io.read",
      role: context.role,
      missionId: context.missionId ?? null,
      path: real,
      bytes: buffer.length,
      skill: skill.name,
    });
    return { name: skill.name, path: real, text, bytes: buffer.length };
  };
  return ResultAsync.fromThrowable(run, (error) => toKeelError(error, "io_failed", `reading skill ${skill.path} failed`))();
}
