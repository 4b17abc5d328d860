import { describeRealCli } from "./real-cli-conformance.js";
import { describeTestkitConformance } from "./testkit-conformance.js";

describeRealCli("claude-code", { unknownThreadId: "3f2b6c1e-0000-4000-8000-00000000beef" });
describeTestkitConformance("claude-code");
