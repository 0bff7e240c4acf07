# SPDX-License-Identifier: MIT
"""python -m entroscope [auto|cpu|cuda]: what entroscope-cli info says, from the module."""

import sys

import entroscope


def main(argv):
    backend = argv[1] if len(argv) > 1 else "auto"
    try:
        about = entroscope.info(backend)
    except (ValueError, RuntimeError) as error:
        print(f"entroscope: {error}", file=sys.stderr)
        return 1
    print(f"entroscope {about['version']} (Python module)")
    print(f"Backends compiled: {', '.join(about['backends_compiled'])}")
    print(f"Backend in use:    {about['backend']} ({about['why']})")
    print(f"Device:            {about['device']}")
    print(f"CPU threads:       {about['cpu_threads']}")
    print("\nCUDA kernel variants (* the default):")
    for op in entroscope.ops():
        rows = entroscope.variants(op)
        print(f"  {op}:{'' if rows else ' none in this build (CPU only)'}")
        for v in rows:
            print(f"  {'*' if v.is_default else ' '} {v.id:<20} {v.label}\n{'':25}{v.lesson}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
