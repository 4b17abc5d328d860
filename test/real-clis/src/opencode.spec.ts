import { describeRealCli } from "./real-cli-conformance.js";
import { describeTestkitConformance } from "./testkit-conformance.js";

describeRealCli("opencode", { unknownThreadId: "ses_ffffffffffffkeelmissing0000", hangTimeoutMs: 60_000 });
describeTestkitConformance("opencode");
