export { startFakeProvider } from "./provider-server.js";
export type { FakeProvider, FakeProviderOptions } from "./provider-server.js";
export type { FakeProviderFailure, FakeProviderRequest } from "./provider-request.js";
export { DEFAULT_FAKE_USAGE, FakeReplySchema, FakeUsageSchema, reportedUsage } from "./provider-script.js";
export type { FakeErrorReply, FakeHangReply, FakeProviderFormat, FakeReply, FakeToolCall, FakeTurnReply, FakeUsage } from "./provider-script.js";
export { FAKE_PROVIDER_CLIS, fakeProviderSetup } from "./provider-cli-setup.js";
export type { FakeProviderAdapterOptions, FakeProviderAddress, FakeProviderCli, FakeProviderCliDirs, FakeProviderCliSetup } from "./provider-cli-setup.js";
export { createFakeProviderSandbox } from "./provider-sandbox.js";
export type { FakeProviderSandbox } from "./provider-sandbox.js";
