# The two commands of the README: `make run` and `make test`. Both set the machine up first.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
export SWIFT
# Options for the watch client of `make run`, e.g. make run ARGS="--unit oz"
ARGS ?=
# The Debian kernels `make test` runs the real-kernel scenarios on, each in a VM of its own:
# by default Debian 12's (linux-image-amd64's, 6.1) and the newest Debian offers (`newest`:
# trixie-backports', 7.3 when written, with the pressure pads and FF_HAPTIC of 6.18 and
# later), as CI runs them. KERNEL picks one series instead, e.g. make test KERNEL=6.12;
# FORCESCALE_KERNEL in the environment does the same. Kernels not installed are fetched the
# first time (scripts/vm-kernel; see docs/testing.md).
KERNEL ?= $(FORCESCALE_KERNEL)
TEST_KERNELS = $(if $(KERNEL),$(KERNEL),default newest)

.PHONY: all setup setup-test setup-bench setup-deb build run test fuzz coverage sanitize bench clean install install-build uninstall deb

# Where `make install` puts things (DESTDIR stages them, as packagers do). With the default
# PREFIX, systemd, udev and systemd-sysusers all look in /usr/local/lib too; another PREFIX
# may need SYSTEMDUNITDIR, UDEVDIR and SYSUSERSDIR pointed at /usr/lib or /etc.
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
UDEVDIR ?= $(PREFIX)/lib/udev
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
BASHCOMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPLETIONDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPLETIONDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# The desktop launcher of forcescale-web's page (desktop/): its entry, icon, AppStream
# metainfo, the script it runs and the page that script shows when the socket is off.
DATADIR ?= $(PREFIX)/share
# The Python module forcescale (python/forcescale, docs/python.md), where Debian's python3
# looks: /usr/lib/python3/dist-packages for PREFIX=/usr (Debian's own packages' place),
# else PREFIX/lib/python3.N/dist-packages (on sys.path for /usr/local). Empty leaves the
# module out (debian/rules: pybuild installs it into python3-forcescale).
PYTHON_VERSION ?= $(shell /usr/bin/python3 -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo 3.11)
PYTHONDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/python3/dist-packages,$(PREFIX)/lib/python$(PYTHON_VERSION)/dist-packages)
APPID = example.a_seed_40262d30.Forcescale
# The programs to install: by default those of `make build` (below). Point INSTALL_BIN_DIR at
# other binaries to install those instead (the tests install the debug build).
INSTALL_BIN_DIR ?=
# The programs `make run` and `make install` run: one release build with the Swift standard
# library (and libstdc++) linked in, in a build directory of its own (.build/static) that run
# and install share, so that neither rebuilds what the other built, linked as one multi-call
# program (forcescale; the other three are links to it). scripts/release-build says how and
# why: it is for the memory the running programs take and the installed size (BENCHMARKS.md,
# Daemon and Footprint).
RELEASE_BUILD = scripts/release-build

all: build

# What building and running need (a packager's build pulls no VM); `make test` and `make bench`
# add what they run beside the programs. See scripts/setup.
setup:
	@scripts/setup build

setup-test:
	@scripts/setup test

setup-bench:
	@scripts/setup bench

setup-deb:
	@scripts/setup deb

build: setup
	$(RELEASE_BUILD) --programs

# forcescaled on the best readable pressure device (the built-in demo's recording, played in
# a loop, when there is none) on a private socket, and `forcescale watch` on it in the
# foreground, with forcescale-web serving the page on loopback (the URL is printed); the
# daemon and the web server stop when watch does (Ctrl-C). See scripts/run.
run: build
	@FORCESCALE_BIN_DIR="$$($(RELEASE_BUILD) --show-programs-path)" scripts/run $(ARGS)

# The Debian packages forcescale, forcescale-web and forcescale-mqtt, from debian/ (dh, with
# the release build of `make build`, reused when it is up to date), into dist/, then lintian
# on them: an error or a warning without an override (debian/*.lintian-overrides, each
# saying why) fails; lintian gets a TMPDIR of its own, removed after it, since it leaves its
# caches in /tmp. Then forcescale-web's desktop entry and AppStream metainfo, as the package
# holds them, pass desktop-file-validate and appstreamcli validate (scripts/check-desktop-files).
# Last, the installed size: the three packages together within 12 MiB, or the build fails
# naming them (scripts/check-installed-size). dist/ holds only this build's files. See
# docs/install.md, Install from a package.
deb: setup-deb
	rm -rf dist
	mkdir dist
	version=$$(dpkg-parsechangelog -S Version) arch=$$(dpkg-architecture -q DEB_HOST_ARCH) && \
	dpkg-buildpackage -us -uc -b --post-clean --buildinfo-option=-udist --changes-option=-udist \
		--buildinfo-file=dist/forcescale_$${version}_$${arch}.buildinfo --changes-file=dist/forcescale_$${version}_$${arch}.changes
	lintian_tmp=$$(mktemp -d) && status=0 && \
	TMPDIR="$$lintian_tmp" lintian --fail-on error,warning --info dist/*.deb || status=$$?; \
	rm -rf "$$lintian_tmp"; exit $$status
	scripts/check-desktop-files dist/forcescale-web_*.deb
	scripts/check-installed-size dist/*.deb

# Every test, after a build that fails on any compiler warning (scripts/build-checked): unit,
# golden replays of ../shared/recordings, the CLI end to end, the Python module (mypy
# --strict, then its pytest suite against the built forcescaled: docs/python.md), the Debian
# packages made and checked (make deb, which scenario o installs), then the real-kernel
# scenarios on each of TEST_KERNELS (in a VM booted from that Debian kernel, about 13
# minutes each; natively when /dev/uinput is usable here and KERNEL is empty: the machine's
# own kernel, then the newest in a VM; see docs/testing.md). The scenarios' own watchdog
# (FORCESCALE_KT_TIMEOUT) and the VM's limit leave room for a machine busy with other work.
# Last, the module suites under ASan and TSan (make sanitize, about 10 minutes).
test: setup-test
	scripts/build-checked
	FORCESCALE_BIN_DIR="$$($(SWIFT) build --show-bin-path)" $(SWIFT) test --skip-build
	cd python && /usr/bin/python3 -m mypy --strict forcescale tests
	bin="$$($(SWIFT) build --show-bin-path)" && cd python && FORCESCALE_BIN_DIR="$$bin" /usr/bin/python3 -m pytest -q -p no:cacheprovider tests
	$(MAKE) --no-print-directory deb
	@status=0; for kernel in $(TEST_KERNELS); do \
		[ "$$kernel" = default ] && series= || series=$$kernel; \
		echo "make test: the real-kernel scenarios on kernel $$kernel"; \
		FORCESCALE_KERNEL=$$series FORCESCALE_KT_TIMEOUT=$${FORCESCALE_KT_TIMEOUT:-1700} FORCESCALE_VM_TIMEOUT=$${FORCESCALE_VM_TIMEOUT:-1800} \
			scripts/kernel-tests "$$($(SWIFT) build --show-bin-path)/forcescale-kernel-tests" || { status=$$?; echo "make test: the scenarios failed on kernel $$kernel (exit status $$status)"; }; \
	done; \
	echo "make test: the module suites under ASan and TSan (scripts/sanitize)"; \
	scripts/sanitize || { status=$$?; echo "make test: a sanitizer pass failed (exit status $$status)"; }; \
	exit $$status

# The module suites under ASan, then TSan: scripts/sanitize.
sanitize: setup-test
	scripts/sanitize

# Line coverage per module of the host suite (llvm-cov): scripts/coverage.
coverage: setup-test
	scripts/coverage

# Every fuzz target under libFuzzer, coverage-guided, FUZZ_SECONDS (60) each: bench/fuzz.
# (`make test` runs a short seeded pass of the same targets without libFuzzer.)
FUZZ_SECONDS ?= 60
fuzz: setup-test
	bench/fuzz $(FUZZ_SECONDS)

bench: setup-bench
	bench/replay
	bench/live
	bench/daemon
	bench/log
	bench/web
	bench/history
	bench/abuse
	bench/characterize

clean:
	$(SWIFT) package clean

# The programs for `make install`: those of `make build` (the name is kept for docs/install.md's
# recipe and for packagers who build as one user and install as another).
install-build: build

# Programs, units, the udev rule and its helper, the sysusers files, man pages, completions
# (written by the programs themselves), the Python module (PYTHONDIR), and the
# configuration file unless one is there. The
# units and the rule name the programs by their installed paths. Nothing is chowned and no
# user is made here; without DESTDIR (a real install) the user is made, udev and systemd
# are told to reload, and each of those commands is printed first. See docs/install.md.
install: $(if $(INSTALL_BIN_DIR),,build)
	@set -e; \
	bin="$(if $(INSTALL_BIN_DIR),$(INSTALL_BIN_DIR),$$($(RELEASE_BUILD) --show-programs-path))"; \
	d="$(DESTDIR)"; \
	install -d "$$d$(BINDIR)" "$$d$(SYSTEMDUNITDIR)" "$$d$(UDEVDIR)/rules.d" "$$d$(SYSUSERSDIR)" \
		"$$d$(MANDIR)/man1" "$$d$(MANDIR)/man5" "$$d$(MANDIR)/man8" "$$d$(SYSCONFDIR)/forcescale" \
		"$$d$(BASHCOMPLETIONDIR)" "$$d$(ZSHCOMPLETIONDIR)" "$$d$(FISHCOMPLETIONDIR)" \
		"$$d$(DATADIR)/applications" "$$d$(DATADIR)/metainfo" "$$d$(DATADIR)/icons/hicolor/scalable/apps" "$$d$(DATADIR)/forcescale-web"; \
	for program in forcescale forcescaled forcescale-web forcescale-mqtt; do \
		if [ -L "$$bin/$$program" ]; then ln -sfn "$$(readlink "$$bin/$$program")" "$$d$(BINDIR)/$$program"; \
		else install -m 0755 "$$bin/$$program" "$$d$(BINDIR)/"; fi; \
	done; \
	sed 's|/usr/local/share/forcescale-web/|$(DATADIR)/forcescale-web/|' desktop/forcescale-web-open > "$$d$(BINDIR)/forcescale-web-open"; \
	chmod 0755 "$$d$(BINDIR)/forcescale-web-open"; \
	install -m 0644 desktop/not-listening.html "$$d$(DATADIR)/forcescale-web/not-listening.html"; \
	install -m 0644 desktop/$(APPID).desktop "$$d$(DATADIR)/applications/$(APPID).desktop"; \
	install -m 0644 desktop/$(APPID).metainfo.xml "$$d$(DATADIR)/metainfo/$(APPID).metainfo.xml"; \
	install -m 0644 desktop/$(APPID).svg "$$d$(DATADIR)/icons/hicolor/scalable/apps/$(APPID).svg"; \
	for unit in forcescaled forcescale-web; do \
		sed "s|/usr/local/bin/$$unit|$(BINDIR)/$$unit|" systemd/$$unit.service > "$$d$(SYSTEMDUNITDIR)/$$unit.service"; \
		install -m 0644 systemd/$$unit.socket "$$d$(SYSTEMDUNITDIR)/$$unit.socket"; \
		chmod 0644 "$$d$(SYSTEMDUNITDIR)/$$unit.service"; \
	done; \
	sed 's|/usr/local/bin/forcescale-mqtt|$(BINDIR)/forcescale-mqtt|' systemd/forcescale-mqtt.service > "$$d$(SYSTEMDUNITDIR)/forcescale-mqtt.service"; \
	chmod 0644 "$$d$(SYSTEMDUNITDIR)/forcescale-mqtt.service"; \
	sed 's|/usr/local/lib/udev/forcescale-udev-pressure|$(UDEVDIR)/forcescale-udev-pressure|' udev/70-forcescale.rules > "$$d$(UDEVDIR)/rules.d/70-forcescale.rules"; \
	chmod 0644 "$$d$(UDEVDIR)/rules.d/70-forcescale.rules"; \
	install -m 0755 udev/forcescale-udev-pressure "$$d$(UDEVDIR)/forcescale-udev-pressure"; \
	install -m 0644 sysusers.d/forcescale.conf sysusers.d/forcescale-web.conf sysusers.d/forcescale-mqtt.conf "$$d$(SYSUSERSDIR)/"; \
	install -m 0644 man/forcescale.1 man/forcescale-web.1 man/forcescale-web-open.1 man/forcescale-mqtt.1 "$$d$(MANDIR)/man1/"; \
	install -m 0644 man/forcescale.conf.5 "$$d$(MANDIR)/man5/forcescale.conf.5"; \
	install -m 0644 man/forcescaled.8 "$$d$(MANDIR)/man8/forcescaled.8"; \
	for program in forcescale forcescaled forcescale-web forcescale-mqtt; do \
		"$$bin/$$program" --generate-completion-script bash > "$$d$(BASHCOMPLETIONDIR)/$$program"; \
		"$$bin/$$program" --generate-completion-script zsh > "$$d$(ZSHCOMPLETIONDIR)/_$$program"; \
		"$$bin/$$program" --generate-completion-script fish > "$$d$(FISHCOMPLETIONDIR)/$$program.fish"; \
		chmod 0644 "$$d$(BASHCOMPLETIONDIR)/$$program" "$$d$(ZSHCOMPLETIONDIR)/_$$program" "$$d$(FISHCOMPLETIONDIR)/$$program.fish"; \
	done; \
	if [ -n "$(PYTHONDIR)" ]; then \
		install -d "$$d$(PYTHONDIR)/forcescale"; \
		install -m 0644 python/forcescale/*.py python/forcescale/py.typed "$$d$(PYTHONDIR)/forcescale/"; \
	fi; \
	for name in forcescale.conf mqtt.conf; do \
		config="$$d$(SYSCONFDIR)/forcescale/$$name"; \
		if [ -e "$$config" ]; then \
			echo "install: kept $$config as it is; the shipped one is etc/$$name"; \
		else \
			install -m 0644 "etc/$$name" "$$config"; \
		fi; \
	done; \
	if [ -z "$$d" ]; then \
		echo "systemd-sysusers $(SYSUSERSDIR)/forcescale.conf $(SYSUSERSDIR)/forcescale-web.conf $(SYSUSERSDIR)/forcescale-mqtt.conf"; \
		systemd-sysusers "$(SYSUSERSDIR)/forcescale.conf" "$(SYSUSERSDIR)/forcescale-web.conf" "$(SYSUSERSDIR)/forcescale-mqtt.conf"; \
		if udevadm control --ping >/dev/null 2>&1; then \
			echo "udevadm control --reload"; udevadm control --reload; \
		else echo "install: systemd-udevd is not running: the rule applies once it starts"; fi; \
		if [ -d /run/systemd/system ]; then \
			echo "systemctl daemon-reload"; systemctl daemon-reload; \
		else echo "install: systemd is not running here: the units apply once it is"; fi; \
		echo "install: next, 'systemctl enable --now forcescaled.socket' and 'udevadm trigger --subsystem-match=input' (docs/install.md, Install as a service); forcescale-web.socket is off until enabled the same way"; \
	fi

# Everything install put there, except an edited configuration file, the user and group
# forcescale and the calibrations in /var/lib/forcescale, which are said and left alone.
# Without DESTDIR the service is stopped and disabled first, and systemd and udev reload.
uninstall:
	@set -e; \
	d="$(DESTDIR)"; \
	if [ -z "$$d" ] && [ -d /run/systemd/system ]; then \
		echo "systemctl disable --now forcescale-mqtt.service forcescale-web.socket forcescale-web.service forcescaled.socket forcescaled.service"; \
		systemctl disable --now forcescale-mqtt.service forcescale-web.socket forcescale-web.service forcescaled.socket forcescaled.service || true; \
	fi; \
	rm -f "$$d$(BINDIR)/forcescale" "$$d$(BINDIR)/forcescaled" "$$d$(BINDIR)/forcescale-web" "$$d$(BINDIR)/forcescale-mqtt" \
		"$$d$(BINDIR)/forcescale-web-open" "$$d$(DATADIR)/forcescale-web/not-listening.html" "$$d$(MANDIR)/man1/forcescale-web-open.1" \
		"$$d$(DATADIR)/applications/$(APPID).desktop" "$$d$(DATADIR)/metainfo/$(APPID).metainfo.xml" \
		"$$d$(DATADIR)/icons/hicolor/scalable/apps/$(APPID).svg" \
		"$$d$(SYSTEMDUNITDIR)/forcescale-mqtt.service" "$$d$(SYSUSERSDIR)/forcescale-mqtt.conf" "$$d$(MANDIR)/man1/forcescale-mqtt.1" \
		"$$d$(BASHCOMPLETIONDIR)/forcescale-mqtt" "$$d$(ZSHCOMPLETIONDIR)/_forcescale-mqtt" "$$d$(FISHCOMPLETIONDIR)/forcescale-mqtt.fish" \
		"$$d$(SYSTEMDUNITDIR)/forcescaled.service" "$$d$(SYSTEMDUNITDIR)/forcescaled.socket" \
		"$$d$(SYSTEMDUNITDIR)/forcescale-web.service" "$$d$(SYSTEMDUNITDIR)/forcescale-web.socket" \
		"$$d$(UDEVDIR)/rules.d/70-forcescale.rules" "$$d$(UDEVDIR)/forcescale-udev-pressure" \
		"$$d$(SYSUSERSDIR)/forcescale.conf" "$$d$(SYSUSERSDIR)/forcescale-web.conf" \
		"$$d$(MANDIR)/man1/forcescale.1" "$$d$(MANDIR)/man1/forcescale-web.1" "$$d$(MANDIR)/man5/forcescale.conf.5" "$$d$(MANDIR)/man8/forcescaled.8" \
		"$$d$(BASHCOMPLETIONDIR)/forcescale" "$$d$(BASHCOMPLETIONDIR)/forcescaled" "$$d$(BASHCOMPLETIONDIR)/forcescale-web" \
		"$$d$(ZSHCOMPLETIONDIR)/_forcescale" "$$d$(ZSHCOMPLETIONDIR)/_forcescaled" "$$d$(ZSHCOMPLETIONDIR)/_forcescale-web" \
		"$$d$(FISHCOMPLETIONDIR)/forcescale.fish" "$$d$(FISHCOMPLETIONDIR)/forcescaled.fish" "$$d$(FISHCOMPLETIONDIR)/forcescale-web.fish"; \
	rmdir "$$d$(DATADIR)/forcescale-web" 2>/dev/null || true; \
	if [ -n "$(PYTHONDIR)" ]; then \
		for file in python/forcescale/*.py python/forcescale/py.typed; do rm -f "$$d$(PYTHONDIR)/forcescale/$${file##*/}"; done; \
		rm -rf "$$d$(PYTHONDIR)/forcescale/__pycache__"; \
		rmdir "$$d$(PYTHONDIR)/forcescale" 2>/dev/null || true; \
	fi; \
	config="$$d$(SYSCONFDIR)/forcescale/mqtt.conf"; \
	if [ -e "$$config" ] && cmp -s etc/mqtt.conf "$$config"; then \
		rm -f "$$config"; \
	elif [ -e "$$config" ]; then \
		echo "uninstall: kept $$config, which was edited"; \
	fi; \
	config="$$d$(SYSCONFDIR)/forcescale/forcescale.conf"; \
	if [ -e "$$config" ] && cmp -s etc/forcescale.conf "$$config"; then \
		rm -f "$$config"; rmdir "$$d$(SYSCONFDIR)/forcescale" 2>/dev/null || true; \
	elif [ -e "$$config" ]; then \
		echo "uninstall: kept $$config, which was edited"; \
	fi; \
	if [ -z "$$d" ]; then \
		if udevadm control --ping >/dev/null 2>&1; then echo "udevadm control --reload"; udevadm control --reload; fi; \
		if [ -d /run/systemd/system ]; then echo "systemctl daemon-reload"; systemctl daemon-reload; fi; \
		echo "uninstall: left the user and group forcescale and /var/lib/forcescale (calibrations): 'userdel forcescale' and 'rm -r /var/lib/forcescale' remove them"; \
		echo "uninstall: left the user forcescale-mqtt: 'userdel forcescale-mqtt' removes it"; \
	fi
