from pipeline.cli import command

command()
