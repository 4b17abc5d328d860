import { KeelError, SAFE_NAME_PATTERN, canonicalJson, utf8Bytes, validate, type JsonValue } from "@keel/core";
import { createRoleSessions, type RoleSessions } from "@keel/sessions";
import { HandoffSchema, capsuleKey } from "@keel/sessions/schemas";
import { createSkillLibrary, type SkillEntry, type SkillLayer } from "@keel/skills";
import type { KeelStore } from "@keel/store";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";

/** A mission id or role: letters, digits, `.`, `_` or `-` (the sessions check the rest). */
const NameSchema = z.string().min(1).max(128).regex(SAFE_NAME_PATTERN, "use letters, digits, '.', '_' or '-'");

/** `role_session_status`: one mission. */
export const RoleSessionStatusRequestSchema = z.strictObject({ missionId: NameSchema });
/** `skills_resolve`: one role, in the layers the server was started with. */
export const SkillsResolveRequestSchema = z.strictObject({ role: NameSchema });
/** `handoff_write`: a role's handoff (done, in flight, next steps, warnings), replacing the previous one. */
export const HandoffWriteRequestSchema = z.strictObject({ missionId: NameSchema, role: NameSchema, handoff: HandoffSchema });

/** Bounds of the session and skills answers (the same order as the engine's `status`). */
export const SESSION_TOOL_LIMITS = Object.freeze({
  /** Roles listed for one mission. */
  roles: 64,
  /** Skills listed per list of a view. */
  skills: 200,
  /** One answer's JSON. */
  answerBytes: 40_000,
});

/** Options of {@link createSessionTools}. */
export interface SessionToolsOptions {
  store: KeelStore;
  /** The skill layers `skills_resolve` reads, in precedence order; none means the tool answers `unsupported`. */
  skillLayers?: SkillLayer[];
}

/** The tools a host's agents call about role sessions, skills and handoffs. */
export interface SessionTools {
  roleSessionStatus(request: unknown): ResultAsync<JsonValue, KeelError>;
  skillsResolve(request: unknown): ResultAsync<JsonValue, KeelError>;
  handoffWrite(request: unknown): ResultAsync<JsonValue, KeelError>;
  close(): Promise<void>;
}

/** Creates the session, skills and handoff tools over a store and skill layers. */
export function createSessionTools(options: SessionToolsOptions): SessionTools {
  const sessions: RoleSessions = createRoleSessions({ store: options.store });
  const library = options.skillLayers && options.skillLayers.length > 0 ? createSkillLibrary({ layers: options.skillLayers }) : undefined;

  const roleSessionStatus = (request: unknown): ResultAsync<JsonValue, KeelError> => {
    const valid = validate(RoleSessionStatusRequestSchema, request, "role_session_status request");
    if (valid.isErr()) return errAsync(valid.error);
    const missionId = String(valid.value.missionId);
    const prefix = ["missions", missionId, "role-sessions"];
    return options.store.docs
      .list(prefix, { limit: SESSION_TOOL_LIMITS.roles + 1 })
      .andThen((page) => {
        const roles = page.items.filter((item) => item.key.length === prefix.length + 1).map((item) => item.key[prefix.length]!);
        const shown = roles.slice(0, SESSION_TOOL_LIMITS.roles);
        return ResultAsync.combine(
          shown.map((role) =>
            ResultAsync.combine([sessions.readCapsule(missionId, role), sessions.readHandoff(missionId, role)] as const).map(([capsule, handoff]) => ({
              role,
              capsuleKey: capsuleKey(missionId, role),
              thread: capsule?.thread ?? null,
              counters: capsule?.counters ?? null,
              checkpointVersion: capsule?.checkpoint?.version ?? null,
              lastFailure: capsule?.lastFailure ? { code: capsule.lastFailure.code, at: capsule.lastFailure.at } : null,
              updatedAt: capsule?.updatedAt ?? null,
              handoff: handoff ? { revision: handoff.revision, writtenAt: handoff.writtenAt } : null,
            })),
          ),
        ).andThen((entries) =>
          sessions.readMissionCheckpoint(missionId).map((checkpoint) => ({
            missionId,
            checkpoint: checkpoint ? { version: checkpoint.version } : null,
            roles: entries,
            omittedRoles: Math.max(0, roles.length - shown.length) + (page.next === undefined ? 0 : 1),
          })),
        );
      })
      .map((answer) => answer as unknown as JsonValue);
  };

  const skillsResolve = (request: unknown): ResultAsync<JsonValue, KeelError> => {
    const valid = validate(SkillsResolveRequestSchema, request, "skills_resolve request");
    if (valid.isErr()) return errAsync(valid.error);
    if (!library) return errAsync(new KeelError("unsupported", "this server has no skill layers: start it with --skills-project, --skills-domain or --skills-global <dir>"));
    return library.resolve(String(valid.value.role)).map((view) => {
      const list = (entries: readonly SkillEntry[]) => ({ entries: entries.slice(0, SESSION_TOOL_LIMITS.skills).map(catalogueEntry), omitted: Math.max(0, entries.length - SESSION_TOOL_LIMITS.skills) });
      const answer = {
        role: view.role,
        mode: view.mode,
        roots: view.roots,
        own: list(view.own),
        reference: list(view.reference),
        shadowed: view.shadowed.length,
        diagnostics: view.diagnostics.slice(0, 50),
        omittedDiagnostics: Math.max(0, view.diagnostics.length - 50),
      };
      return boundAnswer(answer as never);
    });
  };

  const handoffWrite = (request: unknown): ResultAsync<JsonValue, KeelError> => {
    const valid = validate(HandoffWriteRequestSchema, request, "handoff_write request");
    if (valid.isErr()) return errAsync(valid.error);
    return sessions.writeHandoff(String(valid.value.missionId), String(valid.value.role), valid.value.handoff).map((record) => ({ missionId: record.missionId, role: record.role, revision: record.revision, writtenAt: record.writtenAt }));
  };

  return Object.freeze({ roleSessionStatus, skillsResolve, handoffWrite, close: () => sessions.close() });
}

/** Frontmatter only: a skill's body is never answered. */
function catalogueEntry(entry: SkillEntry): JsonValue {
  return { name: entry.name, description: entry.description, path: entry.path, layer: entry.layer, role: entry.role, ownership: entry.ownership };
}

/** Diagnostics go first when the answer passes its bound; the catalogue stays. */
function boundAnswer(answer: Record<string, JsonValue> & { diagnostics: JsonValue[]; omittedDiagnostics: number }): JsonValue {
  if (utf8Bytes(canonicalJson(answer)) <= SESSION_TOOL_LIMITS.answerBytes) return answer;
  return { ...answer, diagnostics: [], omittedDiagnostics: answer.omittedDiagnostics + answer.diagnostics.length };
}
