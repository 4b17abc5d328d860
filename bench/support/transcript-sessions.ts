/**
 * Synthetic pi session files (format v3) for the transcript benchmark: a linear chain of
 * coding-agent turns, or a tree of 50 branches each left with a branch summary. Entries look
 * like a real session's (user prompts, assistant text and tool calls, tool results of a few
 * hundred bytes to a few KiB), about 1 KiB a line on average, as pi's own large fixture.
 */
const TIMESTAMP = Date.UTC(2026, 0, 1);

function line(index: number, parentId: string | null, fields: Record<string, unknown>): string {
  return JSON.stringify({ ...fields, id: `x${index.toString(16).padStart(7, "0")}`, parentId, timestamp: new Date(TIMESTAMP + index).toISOString() });
}

const usage = { input: 1200, output: 80, cacheRead: 900, cacheWrite: 0, totalTokens: 2180, cost: { input: 0.0036, output: 0.0012, cacheRead: 0.0003, cacheWrite: 0, total: 0.0051 } };

/** The payload of the entry at `index` of a turn cycle (user, assistant tool call, tool result, assistant text). */
function payload(index: number): Record<string, unknown> {
  const words = "the quick brown fox jumps over the lazy dog while the build runs ";
  switch (index % 4) {
    case 0:
      return { type: "message", message: { role: "user", content: [{ type: "text", text: `step ${index}: ${words.repeat(3)}` }], timestamp: TIMESTAMP + index } };
    case 1:
      return {
        type: "message",
        message: { role: "assistant", content: [{ type: "text", text: words.repeat(2) }, { type: "toolCall", id: `call_${index}`, name: "read", arguments: { path: `src/file-${index % 97}.ts` } }], api: "openai-completions", provider: "fake", model: "fake-model", usage, stopReason: "toolUse", timestamp: TIMESTAMP + index },
      };
    case 2:
      return { type: "message", message: { role: "toolResult", toolCallId: `call_${index - 1}`, toolName: "read", content: [{ type: "text", text: `export const value${index} = ${index};\n`.repeat(20 + (index % 60)) }], isError: false, timestamp: TIMESTAMP + index } };
    default:
      return { type: "message", message: { role: "assistant", content: [{ type: "text", text: words.repeat(4) }], api: "openai-completions", provider: "fake", model: "fake-model", usage, stopReason: "stop", timestamp: TIMESTAMP + index } };
  }
}

const header = (id: string) => JSON.stringify({ type: "session", version: 3, id, timestamp: new Date(TIMESTAMP).toISOString(), cwd: "/home/user/proj" });

/** A linear session of `entries` entries (a model change, a thinking level, then turns). */
export function linearSession(entries: number): string {
  const lines = [header(`linear-${entries}`)];
  let parent: string | null = null;
  for (let index = 0; index < entries; index++) {
    const fields = index === 0 ? { type: "model_change", provider: "fake", modelId: "fake-model" } : index === 1 ? { type: "thinking_level_change", thinkingLevel: "off" } : payload(index);
    const text = line(index, parent, fields);
    parent = JSON.parse(text).id;
    lines.push(text);
  }
  return `${lines.join("\n")}\n`;
}

/**
 * A tree of `entries` entries: a trunk, and 50 branches that each leave the trunk at an evenly
 * spaced point, run for a while and are abandoned; the trunk continues from the branch point
 * with a branch summary of what was left. The leaf is the trunk's end (its path crosses all 50
 * branch summaries), written last as pi resumes at the last line.
 */
export function branchedSession(entries: number): string {
  const branches = 50;
  const lines = [header(`tree-${entries}`)];
  const branchLength = Math.floor(entries / (branches * 4));
  const trunkLength = entries - branches * (branchLength + 1);
  const trunkStep = Math.max(1, Math.floor(trunkLength / (branches + 1)));
  let index = 0;
  let trunkParent: string | null = null;
  let made = 0;
  let nextBranchAt = trunkStep;
  const push = (parentId: string | null, fields: Record<string, unknown>): string => {
    const text = line(index++, parentId, fields);
    lines.push(text);
    return JSON.parse(text).id as string;
  };
  for (let step = 0; step < trunkLength; step++) {
    const fields = step === 0 ? { type: "model_change", provider: "fake", modelId: "fake-model" } : payload(step);
    trunkParent = push(trunkParent, fields);
    // Branch after an assistant's final answer (a turn boundary), once every trunkStep entries.
    if (made < branches && step >= nextBranchAt && step % 4 === 3) {
      nextBranchAt += trunkStep;
      let branchParent: string = trunkParent;
      for (let offset = 0; offset < branchLength; offset++) branchParent = push(branchParent, payload(offset));
      trunkParent = push(trunkParent, { type: "branch_summary", fromId: branchParent, summary: `## Goal\nBranch ${made} tried another approach.\n\n## Progress\n- explored ${branchLength} entries` });
      made++;
    }
  }
  return `${lines.join("\n")}\n`;
}
