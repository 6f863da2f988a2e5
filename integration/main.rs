// integration tests
