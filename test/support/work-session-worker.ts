// A long-lived Keel process over a filesystem store, driven line by line on stdin:
// `open`, `close`, `turn`, `status`, `exit`. Each answer is one line on stdout.
import { createInterface } from "node:readline";
import { createScriptedBackend } from "@keel/backends/scripted";
import { createKeel } from "@keel/runtime";

const [dir] = process.argv.slice(2);
if (!dir) throw new Error("usage: work-session-worker <dir>");
const keel = createKeel({ dir, backends: [createScriptedBackend({ resumable: true, script: (turn) => `Decision: turn ${turn.call}` })], policy: "rolling" });
const mission = { missionId: "m1" };

const answer = async (command: string): Promise<string> => {
  switch (command) {
    case "open":
      return (await keel.openWorkSession({ ...mission, model: "opus" })).match(
        (status) => `opened ${status.session!.sessionId}`,
        (error) => `err ${error.code}`,
      );
    case "close":
      return (await keel.closeWorkSession(mission)).match(
        (closed) => `closed ${closed.session.sessionId} ${closed.session.turns}`,
        (error) => `err ${error.code}`,
      );
    case "turn":
      return (await keel.runRoleTurn({ ...mission, role: "engineer", prompt: "Work.", model: "opus", budget: { tokens: 100_000 }, taskId: "t1" })).match(
        (turn) => `ok ${turn.workSessionId} ${turn.warnings.length}`,
        (error) => `err ${error.code}`,
      );
    case "status":
      return (await keel.workSession({ ...mission, role: "engineer" })).match(
        (status) => `status ${status.state} ${status.session?.sessionId ?? "-"} ${status.session?.turns ?? "-"}`,
        (error) => `err ${error.code}`,
      );
    default:
      return `err unknown_command`;
  }
};

console.log("ready");
for await (const line of createInterface({ input: process.stdin })) {
  const command = line.trim();
  if (command === "exit") break;
  console.log(await answer(command));
}
await keel.close();
// stdin is still open (the parent holds it): leave explicitly.
process.exit(0);
