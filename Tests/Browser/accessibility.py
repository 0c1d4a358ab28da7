"""axe-core (4.10, as PyPI's axe-selenium-python 3.x bundles it) run on the page in the
browser: the checker people use, not rules of our own. scripts/setup installs the package
into /opt/axe-selenium-python (Debian's Python is externally managed, and the 2.x that pip
picks for Debian 12's Python 3.11 bundles a 2018 axe that flags ARIA 1.2's `meter` role by
mistake); FORCESCALE_AXE_PATH names another directory holding it."""

import os
import sys

AXE_PATH = os.environ.get("FORCESCALE_AXE_PATH", "/opt/axe-selenium-python")
if AXE_PATH not in sys.path:
    sys.path.insert(0, AXE_PATH)

try:
    from axe_selenium_python import Axe  # noqa: E402
except ImportError:
    Axe = None

# What fails a check: axe-core's two worst impacts.
FAILING = {"serious", "critical"}


def axe_findings(browser):
    """Runs axe-core on the page as it is now. Returns `(failure, summary)`: what is wrong
    (no axe-core 4.x, or every serious or critical violation with its rule, impact and
    elements), or None; and a line saying what ran and what minor findings there were.
    (The caller raises its own failure: dashboard.py runs as the main module.)"""
    if Axe is None:
        return (f"axe-selenium-python 3.x is not in {AXE_PATH}: install it with scripts/setup "
                f"(pip install --no-deps --ignore-requires-python --target {AXE_PATH} axe-selenium-python==3.0.0)"), ""
    axe = Axe(browser)
    axe.inject()
    results = axe.run()
    version = results.get("testEngine", {}).get("version", "?")
    if not version.startswith("4."):
        return f"axe-core {version} ran; 4.x is needed (an older one flags ARIA 1.2's meter role by mistake)", ""
    violations = results["violations"]
    failing = [v for v in violations if v.get("impact") in FAILING]
    others = [f"{v['id']} ({v.get('impact')})" for v in violations if v.get("impact") not in FAILING]
    summary = (f"axe-core {version}: {len(results['passes'])} rules pass, no serious or critical violation"
               + (f"; minor: {', '.join(others)}" if others else ""))
    return (f"axe-core {version}: " + axe.report(failing) if failing else None), summary
