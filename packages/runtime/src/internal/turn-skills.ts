import type { KeelError } from "@keel/core";
import type { Backend } from "@keel/backend";
import { renderSkillContract, stageSkills, type SkillDeliveryMode, type SkillLibrary, type SkillView } from "@keel/skills";
import { okAsync, type ResultAsync } from "neverthrow";
import { warnOnError, type Warned } from "./turn-warnings.js";

/** How a role's skills reach a turn's backend. */
export interface TurnSkills {
  /** The delivery mode the backend's adapter declares, or `null` without skills. */
  mode: SkillDeliveryMode | null;
  /** The skill paths a native backend loads itself (empty otherwise). */
  skillPaths: string[];
  /** The rendered skill contract for the prompt, or `null` when the role has no skill. */
  contract: string | null;
}

const NO_SKILLS: TurnSkills = { mode: null, skillPaths: [], contract: null };

/**
 * Resolves the role's skill view for the backend and delivers it as its adapter declares (native
 * paths, a staged directory, or the prompt's contract). A failed resolution (`skills`/`resolve`)
 * or staging (`skills`/`stage`) is a warning, never a failed turn.
 */
export function prepareSkills(skills: SkillLibrary | null, role: string, backend: Backend, cwd: string): ResultAsync<Warned<TurnSkills>, KeelError> {
  if (!skills) return okAsync({ value: NO_SKILLS, warnings: [] });
  const mode = backend.capabilities.skills;
  return warnOnError(
    skills.resolve(role, { deliveryMode: mode }).map((view): SkillView | null => view),
    null,
    "skills",
    "resolve",
  ).andThen(({ value: view, warnings: resolved }) => {
    if (!view) return okAsync({ value: NO_SKILLS, warnings: resolved });
    const contract = view.skills.length > 0 ? renderSkillContract(view) : null;
    const value: TurnSkills = {
      mode,
      skillPaths: mode === "native" ? view.own.map((skill) => skill.path) : [],
      contract: contract && contract.isOk() ? contract.value : null,
    };
    const staged = mode === "staged" ? warnOnError(stageSkills(view, cwd).map(() => undefined), undefined, "skills", "stage") : okAsync({ value: undefined, warnings: [] });
    return staged.map(({ warnings: staging }) => ({ value, warnings: [...resolved, ...staging] }));
  });
}
