import { describeRealCli } from "./real-cli-conformance.js";

describeRealCli("opencode", { unknownThreadId: "ses_ffffffffffffkeelmissing0000", hangTimeoutMs: 60_000 });
