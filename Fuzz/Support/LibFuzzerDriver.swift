// What every fuzz target shares: its invariant check and the start of libFuzzer's driver.
// Each target still defines its own `@_cdecl("fuzz_<name>_main")` entry point in the file of
// its test function (FUZZING.md, "Entry point"), and hands that function to `runLibFuzzer`.

/// Stops the run, so that libFuzzer writes the input as a crash, when an invariant breaks.
package func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError(message()) }
}

package typealias FuzzerTestFunction = @convention(c) (UnsafePointer<UInt8>, Int) -> Int32

@_silgen_name("LLVMFuzzerRunDriver")
private func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ test: FuzzerTestFunction
) -> Int32

/// SwiftPM links an executable with its own entry point (`<module>_main`, aliased to main), so
/// libFuzzer's main never runs: a target's entry point calls this with its test function.
package func runLibFuzzer(
    _ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>, _ test: FuzzerTestFunction
) -> Int32 {
    var argc = argc, argv = argv
    return runFuzzerDriver(&argc, &argv, test)
}
