// Fixture reading, independent counts and seeded randomness live in NucleicTestSupport, shared
// with the end-to-end tests.
@_exported import NucleicTestSupport
