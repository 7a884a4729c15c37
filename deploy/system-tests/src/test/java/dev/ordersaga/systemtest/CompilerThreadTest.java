package dev.ordersaga.systemtest;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The benchmark finds a JVM's JIT compiler threads by the names Linux keeps of them (15 characters). */
class CompilerThreadTest {

    @Test
    void compilerThreadsAreToldFromTheOthers() {
        assertThat(SagaBenchmark.isCompilerThread("C1 CompilerThre")).isTrue();
        assertThat(SagaBenchmark.isCompilerThread("C2 CompilerThre")).isTrue();
        assertThat(SagaBenchmark.isCompilerThread("GC Thread#0")).isFalse();
        assertThat(SagaBenchmark.isCompilerThread("executor-thread")).isFalse();
        assertThat(SagaBenchmark.isCompilerThread("VM Thread")).isFalse();
    }
}
