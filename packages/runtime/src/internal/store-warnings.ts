import { relative, sep } from "node:path";
import type { EventBus } from "@keel/core";
import type { FsStoreWarning } from "@keel/store-fs";

/**
 * Passes the filesystem store's warnings on as `role.session.warning` events (target `store`,
 * operation the warning's type), with the mission and role of the file when it is one of a
 * mission's. A served backup of a capsule or a checkpoint is left out here: the turn that read
 * it reports it itself, with its counters (`Doc.recovered`), in its result's warnings.
 */
export function createStoreWarningRelay(events: EventBus, dir: string): (warning: FsStoreWarning) => void {
  return (warning) => {
    const where = relative(dir, warning.location).split(sep);
    const missionId = where[0] === "missions" && where[1] !== undefined && where.length > 2 ? where[1] : "";
    const role = missionId !== "" && where.length === 4 ? (where[3] ?? "").replace(/\.json$/, "") : "";
    const turnDocument = missionId !== "" && ((where[2] === "role-sessions" && where.length === 4) || (where[2] === "checkpoint.json" && where.length === 3));
    if (warning.type === "served-backup" && turnDocument) return;
    const repaired = warning.type === "served-backup" || warning.type === "quarantined" || warning.type === "truncated-tail";
    events.emit({
      type: "role.session.warning",
      missionId,
      role,
      target: "store",
      operation: warning.type,
      code: repaired ? "corrupt" : "unavailable",
      message: warning.message,
    });
  };
}
