import { KeelError, SafeNameSchema, type Clock, type JsonValue } from "@keel/core";
import { type Doc, type DocStore, type Fence } from "@keel/store";
import { updateDoc } from "@keel/store/kit";
import { errAsync, okAsync, type ResultAsync } from "neverthrow";
import { z } from "zod";
import { truncateList } from "./capsule-bounds.js";
import { CAPSULE_LIMITS } from "./capsule-schema.js";
import { checkpointKey, keyText } from "./session-keys.js";

/** The mission checkpoint format version. */
export const MISSION_CHECKPOINT_SCHEMA_VERSION = 1;

/** One role's part of the mission checkpoint. */
export interface RoleCheckpointEntry {
  /** The role's open checkpoint items. */
  openItems: string[];
  /** The role's turn that wrote them. */
  turn: number;
  /** When they were written, epoch ms. */
  updatedAt: number;
}

/**
 * The mission checkpoint: the shared, role-authored state of a mission. Created empty (a
 * placeholder) by `initMissionCheckpoint`; each role's turns write only their own entry.
 */
export interface MissionCheckpoint {
  /** Always {@link MISSION_CHECKPOINT_SCHEMA_VERSION}. */
  schemaVersion: typeof MISSION_CHECKPOINT_SCHEMA_VERSION;
  /** The mission. */
  missionId: string;
  /** True while no role has written to it. */
  placeholder: boolean;
  /** Each role's entry, by role. */
  roles: Record<string, RoleCheckpointEntry>;
  /** When it was created, epoch ms. */
  createdAt: number;
  /** When it was last written, epoch ms. */
  updatedAt: number;
}

/** A mission checkpoint with its store version. */
export interface MissionCheckpointRecord {
  /** The checkpoint. */
  checkpoint: MissionCheckpoint;
  /** The document's store version. */
  version: number;
}

const count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

/** zod schema of a {@link MissionCheckpoint} (strict). */
export const MissionCheckpointSchema: z.ZodType<MissionCheckpoint> = z.strictObject({
  schemaVersion: z.literal(MISSION_CHECKPOINT_SCHEMA_VERSION),
  missionId: SafeNameSchema.transform(String),
  placeholder: z.boolean(),
  roles: z.record(
    SafeNameSchema.transform(String),
    z.strictObject({
      openItems: z.array(z.string()).max(CAPSULE_LIMITS.maxItems + 1),
      turn: count,
      updatedAt: count,
    }),
  ),
  createdAt: count,
  updatedAt: count,
});

/** Parses a stored checkpoint, or `corrupt` naming where it is. */
export function parseCheckpoint(doc: Doc, missionId: string): ResultAsync<MissionCheckpointRecord, KeelError> {
  const parsed = MissionCheckpointSchema.safeParse(doc.value);
  if (!parsed.success || parsed.data.missionId !== missionId) {
    return errAsync(
      new KeelError("corrupt", `the mission checkpoint at ${keyText(doc.key)} is not a valid checkpoint of mission "${missionId}"`, {
        details: { location: keyText(doc.key) },
      }),
    );
  }
  return okAsync({ checkpoint: parsed.data, version: doc.version });
}

/** What `initMissionCheckpoint` returns: the current checkpoint, and whether this call created it. */
export interface InitializedCheckpoint extends MissionCheckpointRecord {
  /** True when this call created the placeholder; false when a checkpoint existed. */
  created: boolean;
}

/**
 * Creates the empty checkpoint placeholder of a mission with a create-only write, so it never
 * overwrites a checkpoint that exists (placeholder or role-authored). `created` says whether this
 * call made it; either way the current checkpoint is returned.
 */
export function initCheckpoint(docs: DocStore, clock: Clock, missionId: string, triesLeft = 3): ResultAsync<InitializedCheckpoint, KeelError> {
  const key = checkpointKey(missionId);
  const now = clock.now();
  const empty: MissionCheckpoint = {
    schemaVersion: MISSION_CHECKPOINT_SCHEMA_VERSION,
    missionId,
    placeholder: true,
    roles: {},
    createdAt: now,
    updatedAt: now,
  };
  return docs
    .put(key, empty as unknown as JsonValue, { create: true })
    .map((doc) => ({ checkpoint: empty, version: doc.version, created: true }))
    .orElse((error) => {
      if (error.code !== "conflict") return errAsync(error);
      return docs.get(key).andThen((doc) => {
        // Deleted between our conflict and this read: start again, a bounded number of times.
        if (!doc && triesLeft > 1) return initCheckpoint(docs, clock, missionId, triesLeft - 1);
        if (!doc) return errAsync(new KeelError("conflict", `the checkpoint of mission "${missionId}" keeps being created and deleted; try again`, { details: { missionId } }));
        return parseCheckpoint(doc, missionId).map((record) => ({ ...record, created: false }));
      });
    });
}

/** Reads a mission checkpoint: `undefined` when there is none, `corrupt` when unreadable. */
export function readCheckpoint(docs: DocStore, missionId: string): ResultAsync<MissionCheckpointRecord | undefined, KeelError> {
  return docs.get(checkpointKey(missionId)).andThen((doc) => (doc ? parseCheckpoint(doc, missionId) : okAsync(undefined)));
}

/** What {@link writeRoleItems} did. */
export type RoleItemsWrite = { written: true; version: number } | { written: false; reason: "deleted" };

/**
 * Writes one role's open items into the mission checkpoint by CAS read-modify-write, leaving
 * every other role's entry as it is. A missing checkpoint is created, unless `existedBefore`
 * says the turn saw one: then it was deleted during the turn, and is not brought back.
 */
export function writeRoleItems(
  docs: DocStore,
  input: { missionId: string; role: string; items: readonly string[]; turn: number; at: number; existedBefore: boolean; fence?: Fence },
): ResultAsync<RoleItemsWrite, KeelError> {
  const key = checkpointKey(input.missionId);
  let deleted = false;
  const entry: RoleCheckpointEntry = {
    openItems: truncateList(input.items, CAPSULE_LIMITS.maxItems, CAPSULE_LIMITS.maxItemBytes),
    turn: input.turn,
    updatedAt: input.at,
  };
  const written = updateDoc<JsonValue>(
    docs,
    key,
    (current) => {
      deleted = false;
      if (!current) {
        if (input.existedBefore) {
          deleted = true;
          return undefined;
        }
        const created: MissionCheckpoint = {
          schemaVersion: MISSION_CHECKPOINT_SCHEMA_VERSION,
          missionId: input.missionId,
          placeholder: false,
          roles: { [input.role]: entry },
          createdAt: input.at,
          updatedAt: input.at,
        };
        return created as unknown as JsonValue;
      }
      return parseCheckpoint(current, input.missionId).map(({ checkpoint }) => {
        const next: MissionCheckpoint = {
          ...checkpoint,
          placeholder: false,
          roles: { ...checkpoint.roles, [input.role]: entry },
          updatedAt: input.at,
        };
        return next as unknown as JsonValue;
      });
    },
    input.fence ? { fence: input.fence } : {},
  );
  return written.map((doc): RoleItemsWrite => (deleted || !doc ? { written: false, reason: "deleted" } : { written: true, version: doc.version }));
}
