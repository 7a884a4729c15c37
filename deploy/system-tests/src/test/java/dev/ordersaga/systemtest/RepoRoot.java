package dev.ordersaga.systemtest;

import java.nio.file.Path;

/**
 * The repository's root, where the tests find the packaged services, the stack's scripts and the files they check:
 * the build sets {@code saga.repo.root}; run from this module's directory without it, two levels up.
 */
public final class RepoRoot {

    private RepoRoot() {
    }

    public static Path path() {
        return Path.of(System.getProperty("saga.repo.root", "../.."));
    }
}
