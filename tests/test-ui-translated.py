#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# The window in Simplified Chinese: under LANGUAGE=zh_CN, with the build tree's catalogs, its
# controls (from C and from the .ui templates), compute/'s table text, the definition line and the Compare window
# read in Chinese through AT-SPI, as a screen reader would say them.
#
# Usage (it starts its own X server and session bus, through test-ui-accessible.py's helpers):
#   test-ui-translated.py ENTROSCOPE IMAGE SCHEMA_DIR LOCALEDIR

import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location(
    'accessible', os.path.join(os.path.dirname(os.path.abspath(__file__)), 'test-ui-accessible.py'))
accessible = importlib.util.module_from_spec(spec)
spec.loader.exec_module(accessible)  # prints the SKIP line and exits where pyatspi is missing
pyatspi = accessible.pyatspi

count = 0
failed = 0


def ok(passed, description, diagnostics=()):
    global count, failed
    count += 1
    failed += not passed
    print('%s %d - %s' % ('ok' if passed else 'not ok', count, description))
    for line in diagnostics:
        print('# ' + line)


def is_chinese(text):
    return any('\u4e00' <= c <= '\u9fff' for c in text or '')


def names(node, found):
    try:
        found.append((node.getRoleName(), node.name or '', node.description or ''))
        for child in node:
            names(child, found)
    except Exception:  # a node that went away during the walk: the others still count
        pass
    return found


def check(entroscope, image, schema_dir, home):
    process = accessible.start(entroscope, image, schema_dir, home, 1600, 1000, 'entropy')
    try:
        app = accessible.application(process)
        frame = accessible.main_window(app, image)
        # (role, name): the Compute choice from the side panel's template, a tool button from C.
        for role, name, what in ((pyatspi.ROLE_RADIO_BUTTON, '自动', 'the Compute choice "Automatic"'),
                                 (pyatspi.ROLE_PUSH_BUTTON, '线剖面', 'the tool button "Line Profile"')):
            node = accessible.wait_until(what, lambda: accessible.find(
                frame, lambda n, r=role, t=name: n.getRole() == r and n.name == t))
            ok(node is not None, '%s reads %s' % (what, name))
        # The Timings card's device line and reason, which compute/ writes in English.
        node = accessible.wait_until('the Timings card', lambda: accessible.find(
            frame, lambda n: (n.name or '').startswith('CPU：OpenMP，')))
        ok(node is not None, 'the Timings card names the CPU in Chinese', [node.name if node else ''])
        # The definition line over the canvas, which compute/ composes: its words in Chinese on screen
        # (files keep them English: test-ui-definitions).
        node = accessible.wait_until('the definition caption', lambda: accessible.find(
            frame, lambda n: (n.name or '').startswith('5×5 · ')))
        ok(node is not None and node.name == '5×5 · 裁剪 · 16 个箱 · nats', 'the definition caption reads in Chinese',
           [node.name if node else ''])
        found = names(frame, [])
        chinese = [n for n in found if is_chinese(n[1]) or is_chinese(n[2])]
        english = [n for n in found if n[1] in ('Automatic', 'Line Profile', 'Main Menu', 'Side Panel', 'Compute')
                   or n[1].startswith('CPU: OpenMP')
                   or n[1].lower() == 'this build has no cuda backend: nvcc was not found when it was built']
        ok(len(chinese) >= 20 and not english,
           '%d of the window\'s %d nodes read in Chinese, none of the marked English names' % (len(chinese), len(found)),
           ['%s %r' % (role, name) for role, name, _ in english])
        compare = accessible.wait_until('the Compare window', lambda: next(
            (f for f in accessible.frames(app) if f is not frame and is_chinese(f.name)), None))
        ok(compare.name == '比较内核变体', 'the Compare window is titled in Chinese', [compare.name])
    finally:
        process.terminate()
        process.wait(timeout=accessible.TIMEOUT_S)


def main():
    if len(sys.argv) != 5:
        print('Bail out! usage: %s ENTROSCOPE IMAGE SCHEMA_DIR LOCALEDIR' % sys.argv[0])
        return 1
    entroscope, image, schema_dir, localedir = sys.argv[1:]
    # C.UTF-8 is in every glibc: LANGUAGE then picks the catalog, with no zh_CN locale generated.
    os.environ.update({'LANGUAGE': 'zh_CN', 'LANG': 'C.UTF-8', 'ENTROSCOPE_LOCALEDIR': localedir})
    os.environ.pop('LC_ALL', None)
    with accessible.desktop('es-zh-') as home:
        if home is None:
            return 0
        try:
            check(entroscope, image, schema_dir, home)
        except (TimeoutError, accessible.Broken, RuntimeError) as error:
            ok(False, 'the window in Chinese: %s' % error)
    print('1..%d' % count)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
