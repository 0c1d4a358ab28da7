import Testing
@testable import ScaleWeb

