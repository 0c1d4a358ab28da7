import ArgumentParsing
import ScalePOSIX

Signals.ignoreBrokenPipe()

runMain(Forcescale.self)
