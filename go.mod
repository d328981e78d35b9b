module github.com/wsconverge/converge

go 1.26.8

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	pgregory.net/rapid v1.3.0 // indirect
)
