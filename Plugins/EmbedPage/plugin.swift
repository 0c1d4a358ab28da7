import Foundation
import PackagePlugin

/// Builds the dashboard's files (`Page/page.html`, `page.css`, `page.js` in the target's
/// directory) into the target as `EmbeddedPage`, through forcescale-embed-page: the page is
/// edited as HTML, CSS and JavaScript, and forcescale-web stays one self-contained binary.
@main
struct EmbedPage: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        // The target's directory as PackageDescription 6.0 gives a URL of it: its sources
        // are in the package's Sources/NAME (ScaleWeb declares no other path).
        let page = context.package.directoryURL.appending(path: "Sources").appending(path: target.name).appending(path: "Page")
        let files = [("html", "page.html"), ("css", "page.css"), ("script", "page.js")]
        let inputs = files.map { page.appending(path: $0.1) }
        let output = context.pluginWorkDirectoryURL.appending(path: "EmbeddedPage.swift")
        return [
            .buildCommand(
                displayName: "Embedding the dashboard page of \(target.name)",
                executable: try context.tool(named: "forcescale-embed-page").url,
                arguments: [output.path] + zip(files, inputs).map { "\($0.0.0)=\($0.1.path)" },
                inputFiles: inputs, outputFiles: [output]),
        ]
    }
}
