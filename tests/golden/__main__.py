import sys

from tests.golden import main

main(sys.argv[1:])
