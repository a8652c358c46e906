from jaxfix.cli import main

main()
