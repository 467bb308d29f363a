// The embedded-server harness (ServerHarness, TestClient, Peers, requestLine, …) lives in
// the FrameRateTesting product; re-exported here so every test file of this target sees it.
@_exported import FrameRateTesting
