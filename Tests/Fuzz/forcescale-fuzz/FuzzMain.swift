import CFuzzDriver
import Glibc

/// `forcescale-fuzz TARGET [CORPUS...] [options]`: one fuzz target of FuzzTargets.swift.
///
/// Built with libFuzzer (`make fuzz`: `-sanitize=fuzzer,address`, see bench/fuzz), the rest
/// of the command line is libFuzzer's (`-max_total_time=60 CORPUS`). Built plainly (`swift
/// build`, what `make test` runs), it is a mutation fuzzer of its own without coverage
/// guidance: every file of each CORPUS directory, then `-runs=N` mutations of them (1000 by
/// default; byte flips, insertions, deletions, truncations, lines repeated or swapped) from
/// `-seed=S`, so that a pass is the same every time and an input that once crashed stays
/// in the corpus and is tried on every run.
@main
enum FuzzMain {
    nonisolated(unsafe) static var target: FuzzTarget?

    static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard let name = arguments.first, let chosen = FuzzTarget.named(name) else {
            FuzzOutput.error(usage)
            exit(64)
        }
        target = chosen
        if CFuzzDriver_hasLibFuzzer() != 0 {
            // libFuzzer reads argv[0] and its own options: the target's name is taken out.
            var argc = CommandLine.argc - 1
            var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
            argv![1] = argv![0]
            argv = argv! + 1
            exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
                FuzzMain.target!.run(UnsafeBufferPointer(start: data, count: size))
                return 0
            })
        }
        exit(MutationPass(target: chosen, arguments: Array(arguments.dropFirst())).run())
    }

    static var usage: String {
        "usage: forcescale-fuzz TARGET [CORPUS...] [-runs=N] [-seed=S]\ntargets:\n"
            + FuzzTarget.all.map { "  " + $0.name + String(repeating: " ", count: max(1, 9 - $0.name.count)) + $0.summary }.joined(separator: "\n")
    }
}

/// The plain build's pass: the corpus, then seeded mutations of it.
struct MutationPass {
    var target: FuzzTarget
    var corpora: [String] = []
    var runs = 1000
    var seed: UInt64 = 0x666f_7263_6573_6361

    init(target: FuzzTarget, arguments: [String]) {
        self.target = target
        for argument in arguments {
            if argument.hasPrefix("-runs="), let value = Int(argument.dropFirst(6)), value >= 0 {
                runs = value
            } else if argument.hasPrefix("-seed="), let value = UInt64(argument.dropFirst(6)) {
                seed = value
            } else if argument.hasPrefix("-") {
                FuzzOutput.error("forcescale-fuzz: \(argument) needs libFuzzer (make fuzz); this build takes -runs=N and -seed=S")
                exit(64)
            } else {
                corpora.append(argument)
            }
        }
    }

    func run() -> Int32 {
        var inputs: [[UInt8]] = []
        for corpus in corpora {
            guard let names = FuzzFiles.names(in: corpus) else {
                FuzzOutput.error("forcescale-fuzz: \(corpus): cannot read the corpus directory")
                return 66
            }
            for name in names {
                guard let bytes = FuzzFiles.read(corpus + "/" + name) else { continue }
                inputs.append(bytes)
            }
        }
        if inputs.isEmpty { inputs = [[]] }
        for input in inputs { feed(input) }
        var random = SplitMix(seed: seed)
        for _ in 0..<runs {
            let base = inputs[Int(random.next() % UInt64(inputs.count))]
            feed(Mutator.mutate(base, &random))
        }
        FuzzOutput.line("forcescale-fuzz \(target.name): \(inputs.count) corpus inputs and \(runs) mutations, no failure")
        return 0
    }

    private func feed(_ input: [UInt8]) {
        input.withUnsafeBufferPointer { target.run($0) }
    }
}

/// Mutations of the kinds libFuzzer makes most, on whole bytes and on lines.
enum Mutator {
    static func mutate(_ input: [UInt8], _ random: inout SplitMix) -> [UInt8] {
        var bytes = input
        for _ in 0...(random.next() % 4) {
            let position = bytes.isEmpty ? 0 : Int(random.next() % UInt64(bytes.count))
            switch random.next() % 8 {
            case 0 where !bytes.isEmpty: bytes[position] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes.insert(interesting[Int(random.next() % UInt64(interesting.count))], at: position)
            case 2 where !bytes.isEmpty: bytes.remove(at: position)
            case 3: bytes = Array(bytes.prefix(position))
            case 4:
                let digits = Array(tokens[Int(random.next() % UInt64(tokens.count))].utf8)
                bytes.insert(contentsOf: digits, at: position)
            case 5:
                // A line repeated.
                let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
                guard !lines.isEmpty else { break }
                let line = lines[Int(random.next() % UInt64(lines.count))]
                bytes.insert(contentsOf: Array(line) + [UInt8(ascii: "\n")], at: position)
            case 6:
                // Two lines swapped.
                var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map(Array.init)
                guard lines.count > 1 else { break }
                lines.swapAt(Int(random.next() % UInt64(lines.count)), Int(random.next() % UInt64(lines.count)))
                bytes = Array(lines.joined(separator: [UInt8(ascii: "\n")]))
            default:
                if !bytes.isEmpty { bytes[position] = UInt8(truncatingIfNeeded: random.next()) }
            }
        }
        return bytes
    }

    /// Numbers and marks at the edges parsers get wrong.
    static let tokens = ["0", "-1", "255", "4294967296", "1e308", "-1e308", "5e-324", "9223372036854775807", "NaN", "\u{FEFF}", "\r\n"]

    static let interesting: [UInt8] = Array(" \t\n\r:.,-+#\"{}[]=\\0123456789eE".utf8) + [0, 0x7f, 0x80, 0xc3, 0xff]
}

/// Steele, Lea and Flood's SplitMix64: small, seeded, the same sequence everywhere.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}

enum FuzzFiles {
    static func names(in directory: String) -> [String]? {
        guard let stream = opendir(directory) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if !name.hasPrefix(".") { names.append(name) }
        }
        return names.sorted()
    }

    static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count <= 0 { return count == 0 ? bytes : nil }
            bytes += buffer[0..<count]
        }
    }
}

enum FuzzOutput {
    static func line(_ text: String) { write(STDOUT_FILENO, text + "\n") }
    static func error(_ text: String) { write(STDERR_FILENO, text + "\n") }
    private static func write(_ descriptor: Int32, _ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            bytes = bytes.dropFirst(written)
        }
    }
}
