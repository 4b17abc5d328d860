import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { classifyKeys, type DocumentKey } from "./inspect-keys.js";

const segment = fc.constantFrom("missions", "m1", "m2", "role-sessions", "handoffs", "checkpoint", "hygiene", "budget", "engineer", "x.y");
const keys = fc.uniqueArray(fc.array(segment, { minLength: 1, maxLength: 5 }), { selector: (key) => key.join("/"), maxLength: 30 });
const documents = (list: string[][]): DocumentKey[] => list.map((key) => ({ key, version: 1, bytes: 10 }));

describe("classifyKeys", () => {
  it("sorts capsules, handoffs and checkpoints by mission and role, ledgers and the rest apart", () => {
    const classified = classifyKeys(
      documents([
        ["missions", "m2", "role-sessions", "planner"],
        ["missions", "m1", "role-sessions", "engineer"],
        ["missions", "m1", "handoffs", "engineer"],
        ["missions", "m1", "handoffs", "reviewer"],
        ["missions", "m1", "checkpoint"],
        ["missions", "m1", "hygiene", "engineer"],
        ["budget", "mission.m1"],
        ["budget", "a", "b"],
        ["workflows", "w1"],
      ]),
    );
    expect(classified.missions.map((mission) => mission.id)).toEqual(["m1", "m2"]);
    const [m1] = classified.missions;
    expect(m1?.checkpoint?.key).toEqual(["missions", "m1", "checkpoint"]);
    expect(m1?.roles.map((role) => [role.role, role.capsule !== null, role.handoff !== null])).toEqual([
      ["engineer", true, true],
      ["reviewer", false, true],
    ]);
    expect(m1?.other.map((document) => document.key.join("/"))).toEqual(["missions/m1/hygiene/engineer"]);
    expect(classified.ledgers.map((document) => document.key.join("/"))).toEqual(["budget/mission.m1"]);
    expect(classified.other.map((document) => document.key.join("/"))).toEqual(["budget/a/b", "workflows/w1"]);
  });

  it("puts every key in exactly one place", () => {
    fc.assert(
      fc.property(keys, (list) => {
        const classified = classifyKeys(documents(list));
        const placed = [
          ...classified.missions.flatMap((mission) => [
            ...(mission.checkpoint ? [mission.checkpoint] : []),
            ...mission.roles.flatMap((role) => [...(role.capsule ? [role.capsule] : []), ...(role.handoff ? [role.handoff] : [])]),
            ...mission.other,
          ]),
          ...classified.ledgers,
          ...classified.other,
        ].map((document) => document.key.join("/"));
        expect(placed.sort()).toEqual(list.map((key) => key.join("/")).sort());
      }),
    );
  });
});
