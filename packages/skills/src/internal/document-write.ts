import { basename, dirname, join } from "node:path";
import { canonicalJson, type JsonValue, newId } from "@keel/core";
import { errnoOf, type SkillIo } from "../skill-io.js";

/**
 * Replaces a small JSON document atomically and durably: written (fsynced) under a dot name
 * beside it, renamed over it, the directory fsynced. A reader sees the old or the new document.
 * `null` removes the document.
 */
export async function writeDocument(io: SkillIo, path: string, value: JsonValue | null): Promise<void> {
  if (value === null) {
    try {
      await io.unlink(path);
    } catch (error) {
      if (errnoOf(error) !== "ENOENT") throw error;
    }
    await io.syncDirectory(dirname(path));
    return;
  }
  const temporary = join(dirname(path), `.${basename(path)}.${newId()}.tmp`);
  try {
    await io.writeFile(temporary, Buffer.from(`${canonicalJson(value)}\n`, "utf8"));
    await io.rename(temporary, path);
  } catch (error) {
    await io.rm(temporary).catch(() => undefined);
    throw error;
  }
  await io.syncDirectory(dirname(path));
}

/** Reads a JSON document; `undefined` when it is absent. */
export async function readDocument(io: SkillIo, path: string): Promise<unknown> {
  let bytes: Buffer;
  try {
    bytes = await io.readFile(path);
  } catch (error) {
    if (errnoOf(error) === "ENOENT") return undefined;
    throw error;
  }
  return JSON.parse(bytes.toString("utf8")) as unknown;
}
