#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The window as a screen reader meets it: its accessible tree through AT-SPI, every control named.
#
# Usage (it starts its own X server and session bus, as tests/meson.build runs it):
#   test-ui-accessible.py ENTROSCOPE IMAGE SCHEMA_DIR
# Opens IMAGE in the window (and the Compare window, --compare) at the screen's size and at the
# window's minimum size (640×420), and walks the tree of both windows, the side panel and a tool's
# panel. A node fails when it is a control (button, toggle, check, radio, combo, slider, spin,
# entry), an image (the canvas, the colorbar, a histogram) or focusable, and has no name: GTK 4.8
# then reports its type name ("GtkImage", "GtkDropDown"), which is what Orca reads aloud.

import atexit
import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

try:
    import pyatspi
except ImportError:
    print('1..0 # SKIP no pyatspi (python3-pyatspi)')
    sys.exit(0)

# Roles a user acts on: each needs a name of its own.
CONTROLS = {
    pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON, pyatspi.ROLE_CHECK_BOX,
    pyatspi.ROLE_RADIO_BUTTON, pyatspi.ROLE_COMBO_BOX, pyatspi.ROLE_SLIDER, pyatspi.ROLE_SPIN_BUTTON,
    pyatspi.ROLE_ENTRY, pyatspi.ROLE_TEXT, pyatspi.ROLE_PASSWORD_TEXT, pyatspi.ROLE_MENU_ITEM,
    pyatspi.ROLE_LINK, pyatspi.ROLE_PAGE_TAB,
}
# A control's children (its icon, its label, the value a combo row shows) are what its name is
# made of, not stops of their own; in a combo box, only the button a drop-down takes the focus
# with is one.
BUTTONS = {pyatspi.ROLE_PUSH_BUTTON, pyatspi.ROLE_TOGGLE_BUTTON}
# GTK 4.8 marks every scrolled window focusable, to scroll one without a focusable child; the
# focus goes on to its child, which is checked.
CONTAINERS = {pyatspi.ROLE_SCROLL_PANE}
# What GTK 4.8 calls a node that has no name: its type name.
TYPE_NAME = re.compile(r'^(Gtk|Adw|Es)[A-Z]\w*$')
# A mnemonic's underscore read aloud, or a name said twice: GTK 4.8 names a button with a
# mnemonic "_Open… Open…", and a drop-down named besides its label "Left of the split Left of the split".
MNEMONIC = re.compile(r'(^|\s)_\w')
TWICE = re.compile(r'^(.+) \1$')
# How long a window may take to reach the accessibility bus, on a loaded two-core machine.
TIMEOUT_S = 120
SCREEN = (1600, 1000)

count = 0
failed = 0


class Broken(Exception):
    """What ends a window's checks at once: it exited, or a control cannot be used. AT-SPI's own
    errors (GLib.Error, a RuntimeError) are not: an application that just exited, or a tree
    changing under the walk, is polled again."""


def ok(passed, description, diagnostics=()):
    global count, failed
    count += 1
    print(('ok' if passed else 'not ok') + ' %d - %s' % (count, description))
    for line in diagnostics:
        print('# ' + line)
    if not passed:
        failed += 1
    sys.stdout.flush()


def unnamed(name):
    """Whether name is no name a screen reader can say: none, a type name or a garbled one."""
    return (not name or not name.strip() or TYPE_NAME.match(name) is not None
            or MNEMONIC.search(name) is not None or TWICE.match(name) is not None)


def text_of(node):
    try:
        text = node.queryText()
        return text.getText(0, text.characterCount)
    except NotImplementedError:
        return ''


def path_of(trail):
    return ' > '.join('%s %r' % (role, name) for role, name in trail if name and not unnamed(name))


def needs_name(node, role, inside):
    """Whether node is a stop of its own that a screen reader announces by name. Images are: the
    canvas, the colorbar and the histograms say what they show; a decorative icon is left out of
    the tree (role presentation)."""
    if inside == 'control' or (inside == 'combo' and role not in BUTTONS):
        return False
    # An empty label (a banner with no error yet) says nothing; it is not a control.
    if role == pyatspi.ROLE_LABEL and not text_of(node):
        return False
    if role in CONTROLS or role == pyatspi.ROLE_IMAGE:
        return True
    return node.getState().contains(pyatspi.STATE_FOCUSABLE) and role not in CONTAINERS


def walk(node, trail, inside, found):
    """Appends to found each node of the tree under node that needs a name and lacks one. inside:
    None, 'combo' (in a combo box) or 'control' (in another control)."""
    role = node.getRole()
    name = node.name
    if needs_name(node, role, inside) and unnamed(name):
        found.append('%s named %r, in %s' % (node.getRoleName(), name, path_of(trail)))
    if role == pyatspi.ROLE_COMBO_BOX and inside is None:
        inside = 'combo'
    elif role in CONTROLS and role != pyatspi.ROLE_COMBO_BOX:
        inside = 'control'
    here = trail + [(node.getRoleName(), name)]
    for child in node:
        if child is not None:
            walk(child, here, inside, found)


def wait_until(what, probe):
    """probe's first true value, polled; Broken from probe ends the wait at once."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        try:
            value = probe()
        except Broken:
            raise
        except Exception:  # see Broken
            value = None
        if value:
            return value
        time.sleep(0.2)
    raise TimeoutError('timed out waiting for ' + what)


def find(node, predicate):
    if predicate(node):
        return node
    for child in node:
        if child is not None:
            hit = find(child, predicate)
            if hit is not None:
                return hit
    return None


def named(role, name):
    return lambda n: n.getRole() == role and n.name == name


def application(process):
    def probe():
        if process.poll() is not None:
            raise Broken('the window exited with status %d' % process.returncode)
        for app in pyatspi.Registry.getDesktop(0):
            try:
                if app is not None and app.get_process_id() == process.pid:
                    return app
            except RuntimeError:  # an application that has just exited (the previous window)
                continue
        return None
    return wait_until('the window on the accessibility bus', probe)


def frames(app):
    return [child for child in app if child is not None and child.getRole() == pyatspi.ROLE_FRAME]


def check_tree(what, node, tries=3):
    """One TAP point: no node under node lacks a name. A walk that the window's tree changes
    under (a view or the Compare window finishing its work) raises an AT-SPI error; it is
    walked again."""
    for attempt in range(tries):
        found = []
        try:
            walk(node, [], None, found)
            break
        except RuntimeError:
            if attempt == tries - 1:
                raise
            time.sleep(0.5)
    ok(not found, 'every control of %s has a name' % what, found)


def click(node):
    action = node.queryAction()
    for i in range(action.nActions):
        if action.getName(i) == 'click':
            action.doAction(i)
            return
    raise Broken('%s %r has no click action' % (node.getRoleName(), node.name))


def start_session_bus():
    """A D-Bus session bus of the test's own, which starts the accessibility bus for the window.
    Unlike dbus-run-session's, its services' chatter ("SpiRegistry daemon is running…") stays off
    the TAP stream."""
    # The accessibility bus's socket goes into $XDG_RUNTIME_DIR/at-spi (else ~/.cache/at-spi, one
    # path for every test): a directory of the test's own keeps two such tests (this one and
    # ui-translated, run side by side) from taking each other's socket.
    os.environ['XDG_RUNTIME_DIR'] = tempfile.mkdtemp(prefix='es-a11y-runtime-')
    atexit.register(shutil.rmtree, os.environ['XDG_RUNTIME_DIR'], ignore_errors=True)
    ready, write_end = os.pipe()
    bus = subprocess.Popen(['dbus-daemon', '--session', '--nofork', '--print-address=%d' % write_end],
                           pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(ready) as address:
        os.environ['DBUS_SESSION_BUS_ADDRESS'] = address.readline().strip()
    if not os.environ['DBUS_SESSION_BUS_ADDRESS']:
        raise RuntimeError('dbus-daemon did not start')
    return bus


def accepts_clients(display):
    """Whether an X client can connect to :display now, through the abstract or the file socket."""
    for address in ('\0/tmp/.X11-unix/X' + display, '/tmp/.X11-unix/X' + display):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            try:
                client.connect(address)
                return True
            except OSError:
                pass
    return False


def start_x_server():
    """An X server of the screen's size on a free display: Xvfb picks the number itself and writes it
    when it accepts clients (-displayfd), which xvfb-run -a, racing the other UI tests, does not.
    A server that accepts no client is replaced, up to three times. -noreset: by default Xvfb
    resets when its last client leaves, and the probe below is a client; a window that connected
    during that reset could not open the display."""
    for attempt in range(3):
        ready, write_end = os.pipe()
        server = subprocess.Popen(['Xvfb', '-displayfd', str(write_end), '-screen', '0', '%dx%dx24' % SCREEN,
                                   '-nolisten', 'tcp', '-noreset'], pass_fds=(write_end,),
                                  stderr=subprocess.DEVNULL)
        os.close(write_end)
        with os.fdopen(ready) as number:
            display = number.readline().strip()
        if display and accepts_clients(display):
            os.environ['DISPLAY'] = ':' + display
            os.environ.pop('XAUTHORITY', None)
            return server
        server.terminate()
        server.wait()
    raise RuntimeError('Xvfb did not start, or accepted no client on the display it chose')


def start(entroscope, image, schema_dir, home, width, height, view):
    config = os.path.join(home, 'config', 'glib-2.0', 'settings')
    os.makedirs(config, exist_ok=True)
    # The keyfile backend lets the window start at the size and with the view asked for.
    with open(os.path.join(config, 'keyfile'), 'w') as keyfile:
        keyfile.write("[org/entroscope/Entroscope]\nwindow-width=%d\nwindow-height=%d\nview='%s'\n"
                      % (width, height, view))
    env = dict(os.environ)
    for quiet in ('GTK_A11Y', 'NO_AT_BRIDGE'):  # the other UI tests turn accessibility off
        env.pop(quiet, None)
    env.update({
        'GSETTINGS_SCHEMA_DIR': schema_dir, 'GSETTINGS_BACKEND': 'keyfile', 'GSK_RENDERER': 'cairo',
        'ADW_DISABLE_PORTAL': '1', 'XDG_CONFIG_HOME': os.path.join(home, 'config'),
        'XDG_DATA_HOME': os.path.join(home, 'data'), 'XDG_CACHE_HOME': os.path.join(home, 'cache'),
    })
    return subprocess.Popen([entroscope, '--compare', image], env=env, stdout=subprocess.DEVNULL)


def canvas_of(frame):
    """The canvas: the one image that takes the focus (for its keys: zoom, pan, tools)."""
    return find(frame, lambda n: n.getRole() == pyatspi.ROLE_IMAGE and
                n.getState().contains(pyatspi.STATE_FOCUSABLE))


def main_window(app, image):
    base = os.path.basename(image)
    return wait_until('the window to show %s' % base,
                      lambda: next((f for f in frames(app) if f.name.startswith(base)), None))


def check_window(entroscope, image, schema_dir, home, width, height, view, described):
    """The windows at width×height showing view; the canvas's description starts with described."""
    size = '%d×%d' % (width, height)
    process = start(entroscope, image, schema_dir, home, width, height, view)
    try:
        app = application(process)
        frame = main_window(app, image)
        canvas = wait_until('the canvas to describe the image',
                            lambda: (c := canvas_of(frame)) and c.description and c)
        extents = frame.queryComponent().getExtents(pyatspi.WINDOW_COORDS)
        # The frame's extents come out a few pixels smaller than the size asked for (1590×990).
        ok(abs(extents.width - width) <= 16 and abs(extents.height - height) <= 16,
           'the window is %s' % size, ['%d×%d' % (extents.width, extents.height)])
        check_tree('the window at %s' % size, frame)

        base = os.path.basename(image)
        ok(not unnamed(canvas.name) and canvas.description.startswith(described)
           and base in canvas.description, 'the canvas at %s says what it shows' % size,
           ['name %r, description %r' % (canvas.name, canvas.description)])

        choices = (pyatspi.ROLE_CHECK_BOX, pyatspi.ROLE_RADIO_BUTTON)
        radios = [find(frame, lambda n, t=title: n.name == t and n.getRole() in choices)
                  for title in ('Automatic', 'CUDA', 'CPU')]
        ok(all(r is not None and r.getRole() == pyatspi.ROLE_RADIO_BUTTON for r in radios),
           'the Compute choices at %s are radio buttons' % size,
           ['%s: %s' % (r.name, r.getRoleName()) for r in radios if r is not None])

        # A tool's results panel: the profile's.
        profile = named(pyatspi.ROLE_PUSH_BUTTON, 'Line Profile')
        click(wait_until('the profile tool', lambda: find(frame, profile)))
        wait_until('the tool panel', lambda: find(frame, lambda n: n.name == 'Values along the line'))
        check_tree('the window with a tool open at %s' % size, frame)

        # The Compare window, which --compare opened beside it.
        compare = wait_until('the Compare window', lambda: next((f for f in frames(app) if f is not frame and
                                                                 f.name.startswith('Compare')), None))
        check_tree('the Compare window opened at %s' % size, compare)
    finally:
        process.terminate()
        process.wait(timeout=TIMEOUT_S)


@contextlib.contextmanager
def desktop(prefix):
    """A session bus, an X server and a home folder of the test's own for the length of the
    block (yields the folder); None instead, with the TAP SKIP line printed, where a program
    they need is not installed."""
    for program, package in (('Xvfb', 'xvfb'), ('dbus-daemon', 'dbus-daemon'),
                             ('/usr/libexec/at-spi-bus-launcher', 'at-spi2-core')):
        if shutil.which(program) is None:
            print('1..0 # SKIP no %s (%s)' % (program, package))
            yield None
            return
    bus = start_session_bus()
    server = start_x_server()
    home = tempfile.mkdtemp(prefix=prefix)
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)
        server.terminate()
        server.wait()
        bus.terminate()
        bus.wait()


def main():
    if len(sys.argv) != 4:
        print('Bail out! usage: %s ENTROSCOPE IMAGE SCHEMA_DIR' % sys.argv[0])
        return 1
    entroscope, image, schema_dir = sys.argv[1:]
    with desktop('es-a11y-') as home:
        if home is None:
            return 0
        # The window as large as the screen with one view; at its minimum size, the grid of views.
        for width, height, view, described in (SCREEN + ('entropy', 'Entropy heatmap of'),
                                               (640, 420, 'grid', 'Grid of 4 views')):
            try:
                check_window(entroscope, image, schema_dir, os.path.join(home, view), width, height, view,
                             described)
            except (TimeoutError, Broken, RuntimeError) as error:
                ok(False, 'the window at %d×%d: %s' % (width, height, error))
    print('1..%d' % count)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
