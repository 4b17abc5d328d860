import type { BackendDetection } from "@keel/backends";
import { paint, type CliIo } from "../cli-io.js";
import type { NodeCheck, StoreDirectoryCheck } from "./doctor-checks.js";
import { printable } from "./inspect-text.js";
import type { OptionalPeerCheck } from "./optional-peers.js";

/** Everything `keel doctor` checked: the document `--json` prints. */
export interface DoctorReport {
  /** False when Node is too old or the store directory is not writable (exit code 1). */
  ok: boolean;
  node: NodeCheck;
  store: StoreDirectoryCheck;
  /** Every backend adapter: installed or not, its version, whether it resumes. Not part of `ok`. */
  backends: BackendDetection[];
  /** The optional peers of @keel/cli by the feature that needs them: installed or not, and the install line. Not part of `ok`. */
  optionalPeers: OptionalPeerCheck[];
}

type Style = Pick<CliIo, "color">;

function mark(style: Style, ok: boolean): string {
  return ok ? paint(style, "green", "ok  ") : paint(style, "red", "FAIL");
}

function storeLine(store: StoreDirectoryCheck): string {
  const dir = printable(store.dir);
  if (store.problem !== null) return `${dir}: ${printable(store.problem)}`;
  if (!store.exists) return `${dir} does not exist yet; ${printable(store.checked)} is writable, so it can be created`;
  return `${dir} exists, ${store.isStore ? "holds a Keel store" : "holds no Keel store yet"}, writable`;
}

/**
 * What the adapter is proven against, and where the installed version stands: `proven 0.73.1`
 * (installed and inside the proven range), `newer than proven 0.73.1`, `older than proven …`,
 * `proven with 0.73.1` (not installed, or no version read), `recordings only`.
 */
export function provenText(backend: BackendDetection): string {
  if (backend.provenAgainst !== "real-cli" || backend.provenVersions === null) return "recordings only";
  const proven = backend.provenVersions.provenWith;
  switch (backend.versionStanding) {
    case "proven":
      return `proven ${proven}`;
    case "newer":
      return `newer than proven ${proven}`;
    case "older":
      return `older than proven ${proven}`;
    default:
      return `proven with ${proven}`;
  }
}

function backendLines(style: Style, backends: readonly BackendDetection[]): string[] {
  const width = Math.max(...backends.map((backend) => backend.id.length), 2);
  const versionWidth = Math.max(...backends.map((backend) => printable(backend.version ?? "-").length), 7);
  const provenWidth = Math.max(...backends.map((backend) => provenText(backend).length), 6);
  return backends.map((backend) => {
    const status = backend.available ? paint(style, "green", "available    ") : paint(style, "dim", "not available");
    const resume = backend.resumable ? "resumes   " : "fresh only";
    const proven = provenText(backend);
    const shownProven = backend.versionStanding === "newer" || backend.versionStanding === "older" ? paint(style, "yellow", proven) : proven;
    const padding = " ".repeat(provenWidth - proven.length);
    const where = backend.available ? (backend.path ?? (backend.kind === "http" ? "API key set" : "")) : (backend.problem ?? "");
    return `  ${backend.id.padEnd(width)}  ${status}  ${printable(backend.version ?? "-").padEnd(versionWidth)}  ${resume}  ${shownProven}${padding}  ${printable(where)}`;
  });
}

/** The closing lines: which adapters are proven against the real CLI (with which version) and which only against recordings. */
function provenSummary(backends: readonly BackendDetection[]): string[] {
  const real = backends.filter((backend) => backend.provenAgainst === "real-cli" && backend.provenVersions !== null);
  const recorded = backends.filter((backend) => !real.includes(backend));
  return [
    `Proven against the real CLI, offline: ${real.map((backend) => `${backend.id} ${backend.provenVersions!.provenWith}`).join(", ") || "none"}`,
    `Proven only against recorded output: ${recorded.map((backend) => backend.id).join(", ") || "none"}`,
  ];
}

function peerLines(style: Style, checks: readonly OptionalPeerCheck[]): string[] {
  const width = Math.max(...checks.map((check) => check.feature.length));
  return checks.map((check) => {
    const found = check.peers.filter((peer) => peer.path !== null);
    const status = check.installed ? paint(style, "green", "installed    ") : paint(style, "dim", "not installed");
    const what = check.installed
      ? found.map((peer) => `${peer.name} ${printable(peer.version ?? "?")}`).join(", ")
      : `${found.length > 0 ? `missing ${check.peers.filter((peer) => peer.path === null).map((peer) => peer.name).join(", ")}: ` : ""}${check.install}`;
    return `  ${check.feature.padEnd(width)}  ${status}  ${what}`;
  });
}

/** The text `keel doctor` prints. Pure. */
export function renderDoctorReport(report: DoctorReport, style: Style): string {
  const available = report.backends.filter((backend) => backend.available);
  const resumable = available.filter((backend) => backend.resumable);
  const lines = [
    paint(style, "bold", "keel doctor"),
    "",
    `${mark(style, report.node.ok)}  Node.js ${printable(report.node.version)} (Keel needs ${report.node.required})`,
    `${mark(style, report.store.writable)}  store: ${storeLine(report.store)}`,
    "",
    paint(style, "bold", `Backends: ${available.length} of ${report.backends.length} available, ${resumable.length} of them resume threads`),
    ...backendLines(style, report.backends),
    ...provenSummary(report.backends),
    "",
    paint(style, "bold", `Optional peers (installed beside @keel/cli only for what needs them): ${report.optionalPeers.filter((check) => check.installed).length} of ${report.optionalPeers.length} installed`),
    ...peerLines(style, report.optionalPeers),
    "",
    report.ok
      ? `${paint(style, "green", "ready")}${available.length === 0 ? ": no backend is installed; the scripted backend (keel demo) still works" : ""}`
      : `${paint(style, "red", "not ready")}: ${[!report.node.ok && "upgrade Node.js", !report.store.writable && "use a writable --dir"].filter(Boolean).join(" and ")}`,
  ];
  return `${lines.join("\n")}\n`;
}
